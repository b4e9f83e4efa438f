package jsonrpc

import (
	"io"
	"runtime"
	"strings"
	"testing"
)

// A run of long lines of one size, as a server's tools/list answers are
// (ten servers of 502 tools: 248 KB each, every list), is read into buffers
// of about that size: a chunk more (64 KiB) on each was a quarter of the
// line zeroed and collected for nothing, 0.6 MB a list of 5,020 tools.
func TestRepeatedLongLineBufferFitsIt(t *testing.T) {
	for _, size := range []int{200 << 10, 248 << 10, 1 << 20, 3 << 20} {
		line := `"` + strings.Repeat("x", size-2) + "\"\n"
		s := NewLineStream(&repeatReader{line: line}, io.Discard, nil, 0)
		if _, err := s.Read(); err != nil { // the first one finds the size
			t.Fatal(err)
		}
		for range 3 {
			l, err := s.Read()
			if err != nil || len(l) != size {
				t.Fatalf("Read = %d bytes, %v; want %d", len(l), err, size)
			}
			if spare := cap(l) - len(l); spare > size/16 {
				t.Errorf("a %d-byte line like the last is read into %d bytes (%d spare); want at most a sixteenth spare", size, cap(l), spare)
			}
		}
	}
}

// A long line a little longer than the last (a list grown by a few tools,
// a result of another size) outgrows its buffer by little, and costs
// little more than its size: the rest goes into a block of about the
// line's size, not into a block of 4 MiB.
func TestSlightlyLongerLineSpillsLittle(t *testing.T) {
	const size = 248 << 10
	first := `"` + strings.Repeat("x", size-2) + "\"\n"
	second := `"` + strings.Repeat("y", size+size/8-2) + "\"\n"
	s := NewLineStream(strings.NewReader(first+second), io.Discard, nil, 0)
	if _, err := s.Read(); err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	l, err := s.Read()
	runtime.ReadMemStats(&after)
	if err != nil || len(l) != len(second)-1 {
		t.Fatalf("Read = %d bytes, %v", len(l), err)
	}
	if got := after.TotalAlloc - before.TotalAlloc; got > uint64(3*len(l)) {
		t.Errorf("a %d KiB line after one of %d KiB allocated %d KiB; want at most 3 times the line", len(l)>>10, size>>10, got>>10)
	}
}
