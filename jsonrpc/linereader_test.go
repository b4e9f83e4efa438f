package jsonrpc

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"runtime"
	"strings"
	"testing"
	"testing/iotest"
)

// FuzzLineReader checks the line reader against a plain split on '\n', for
// any read buffer size and reads that return a byte at a time or half of
// what was asked: same lines, same over-size verdicts and sizes.
func FuzzLineReader(f *testing.F) {
	f.Add([]byte("{\"a\":1}\n{\"b\"\r\n\n"), 8, 4, false)
	f.Add([]byte(strings.Repeat("x", 200)+"\nnext\n"+strings.Repeat("y", 50)), 100, 16, true)
	f.Add([]byte(strings.Repeat("x", 1000)+"\n"+strings.Repeat("y", 2000)+"\nz"), 5000, 16, false)
	f.Fuzz(func(t *testing.T, data []byte, limit, chunk int, oneByte bool) {
		if limit < 1 || limit > 1<<16 || chunk < 1 || chunk > 1<<12 {
			return
		}
		var r io.Reader = bytes.NewReader(data)
		if oneByte {
			r = iotest.OneByteReader(r)
		} else {
			r = iotest.HalfReader(r)
		}
		lr := newLineReaderSize(r, limit, chunk)
		var want []string
		lines := strings.Split(string(data), "\n")
		for i, l := range lines {
			if i == len(lines)-1 && l == "" {
				break
			}
			if len(l) > limit {
				want = append(want, fmt.Sprintf("too large: %d", len(l)))
			} else {
				want = append(want, l)
			}
		}
		for i, w := range want {
			line, err := lr.readLine()
			var tl *TooLargeError
			got := string(line)
			if errors.As(err, &tl) {
				got = fmt.Sprintf("too large: %d", tl.Size)
				if len(tl.Prefix) > limit || !strings.HasPrefix(lines[i], string(tl.Prefix)) {
					t.Fatalf("prefix of %d bytes kept for limit %d", len(tl.Prefix), limit)
				}
			} else if err != nil && err != io.EOF {
				t.Fatalf("line %d: %v", i, err)
			}
			if got != w {
				t.Fatalf("line %d = %q, want %q", i, got, w)
			}
		}
		if line, err := lr.readLine(); err != io.EOF || len(line) != 0 {
			t.Fatalf("after the last line: %q, %v; want EOF", line, err)
		}
	})
}

// Reading a run of long lines allocates about once per line, at its size:
// the buffer is not regrown for each one (a 50 MiB result cost ~128 MB of
// buffers when it doubled from zero each time, and ~600 MB before that).
func TestLineReaderLongLinesAllocateOnce(t *testing.T) {
	const size = 4 << 20
	line := `"` + strings.Repeat("x", size-2) + "\"\n"
	var total uint64
	s := NewLineStream(&repeatReader{line: line}, io.Discard, nil, 0)
	if _, err := s.Read(); err != nil { // the first one finds the size
		t.Fatal(err)
	}
	const n = 5
	allocs := testing.AllocsPerRun(n, func() {
		l, err := s.Read()
		if err != nil || len(l) != size {
			t.Fatalf("readLine = %d bytes, %v", len(l), err)
		}
		total += uint64(cap(l))
	})
	if allocs > 1 || total > uint64(n+1)*(size+2*readChunk) {
		t.Errorf("a %d-byte line takes %.0f allocations, %d bytes of buffer on average; want 1 of about its size", size, allocs, total/(n+1))
	}
}

// repeatReader returns line forever, in reads of at most 64 KiB, as a pipe
// does.
type repeatReader struct {
	line string
	off  int
}

func (r *repeatReader) Read(p []byte) (int, error) {
	p = p[:min(len(p), 64<<10)]
	n := 0
	for n < len(p) {
		c := copy(p[n:], r.line[r.off:])
		n += c
		r.off = (r.off + c) % len(r.line)
	}
	return n, nil
}

// A long line after a much longer one does not keep that one's buffer: a
// message kept for long (a cached list) must not pin megabytes it does not
// use.
func TestLongLineAfterBiggerOneIsTrimmed(t *testing.T) {
	big := strings.Repeat("x", 8<<20) + "\n"
	small := strings.Repeat("y", 200<<10) + "\n"
	s := NewLineStream(strings.NewReader(big+small), io.Discard, nil, 0)
	if _, err := s.Read(); err != nil {
		t.Fatal(err)
	}
	line, err := s.Read()
	if err != nil || len(line) != len(small)-1 {
		t.Fatalf("Read = %d bytes, %v", len(line), err)
	}
	if cap(line) > 2*len(line) {
		t.Errorf("a %d-byte line holds a buffer of %d bytes", len(line), cap(line))
	}
}

// The first long line of a stream, read without knowing its size, costs
// about twice its size in buffers, not the four times that doubling a
// buffer did (each step's smaller buffers left to the collector: a 50 MiB
// result once took 250 MiB of the gateway's peak memory).
func TestFirstLongLineAllocatesTwiceItsSize(t *testing.T) {
	const size = 24 << 20
	line := strings.Repeat("x", size) + "\n"
	s := NewLineStream(strings.NewReader(line), io.Discard, nil, 64<<20)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	l, err := s.Read()
	runtime.ReadMemStats(&after)
	if err != nil || len(l) != size {
		t.Fatalf("Read = %d bytes, %v", len(l), err)
	}
	if got := after.TotalAlloc - before.TotalAlloc; got > 3*size {
		t.Errorf("reading a %d MiB line allocated %d MiB; want at most 3 times the line", size>>20, got>>20)
	}
}

// Once a line is big, reads take as much as a raised pipe holds, and what
// comes after the line in the same read is kept whole, in a read buffer
// grown for it that is back to its size once it is read.
func TestLinesAfterBigLineInOneRead(t *testing.T) {
	big := strings.Repeat("x", 3<<20)
	var small []string
	for i := range 20000 {
		small = append(small, fmt.Sprintf(`{"n":%d}`, i))
	}
	lr := newLineReader(strings.NewReader(big+"\n"+strings.Join(small, "\n")+"\n"), 8<<20)
	if line, err := lr.readLine(); err != nil || string(line) != big {
		t.Fatalf("big line: %d bytes, %v", len(line), err)
	}
	if len(lr.buf) <= readChunk {
		t.Fatalf("the read after the big line left %d bytes for the next lines; want more than a chunk", lr.end-lr.pos)
	}
	for _, want := range small {
		if line, err := lr.readLine(); err != nil || string(line) != want {
			t.Fatalf("readLine = %q, %v; want %q", line, err, want)
		}
	}
	if _, err := lr.readLine(); err != io.EOF {
		t.Fatalf("after the last line: %v; want EOF", err)
	}
	if len(lr.buf) != readChunk {
		t.Errorf("read buffer of %d bytes once drained; want %d", len(lr.buf), readChunk)
	}
}
