package jsonrpc

import (
	"bytes"
	"errors"
	"io"
	"slices"
	"strings"
	"testing"
	"testing/iotest"
	"unsafe"
)

// lineWatch records what a LineWatcher is told.
type lineWatch struct {
	first  []byte
	pieces [][]byte
	done   []byte
	ended  int // Done calls
}

func (w *lineWatch) Piece(line []byte) {
	if w.ended > 0 {
		panic("Piece after Done")
	}
	w.pieces = append(w.pieces, line)
}

func (w *lineWatch) Done(line []byte) { w.done, w.ended = line, w.ended+1 }

// watchAll reads every line of r with a watcher on each long one, and
// returns the lines read and the watchers, in order.
func watchAll(t *testing.T, r io.Reader, limit, chunk int) ([][]byte, []*lineWatch) {
	t.Helper()
	lr := newLineReaderSize(r, limit, chunk)
	var watches []*lineWatch
	lr.watch = func(first []byte) LineWatcher {
		w := &lineWatch{first: bytes.Clone(first)}
		watches = append(watches, w)
		return w
	}
	var lines [][]byte
	for {
		line, err := lr.readLine()
		var tl *TooLargeError
		switch {
		case errors.As(err, &tl):
			lines = append(lines, nil)
			continue
		case err == io.EOF:
			if len(line) > 0 {
				lines = append(lines, line)
			}
			return lines, watches
		case err != nil:
			t.Fatal(err)
		}
		lines = append(lines, line)
	}
}

// A long line's watcher is told each piece in the memory the line is
// returned in, each a prefix of the next, then the whole line; short
// lines have none.
func TestLineWatcherSeesPiecesOfLongLine(t *testing.T) {
	long := `{"result":"` + strings.Repeat("abcdefgh", 200) + `"}`
	// The first long line outgrows the first guess at its size (spilled,
	// not watched); the next ones are read into a buffer of its size.
	input := long + "\n" + "short\n" + long + "\n" + "short again\n" + long + "\n"
	for _, name := range []string{"whole", "onebyte", "half"} {
		t.Run(name, func(t *testing.T) {
			var r io.Reader = strings.NewReader(input)
			switch name {
			case "onebyte":
				r = iotest.OneByteReader(r)
			case "half":
				r = iotest.HalfReader(r)
			}
			lines, watches := watchAll(t, r, 1<<20, 64)
			if len(lines) != 5 || len(watches) < 2 {
				t.Fatalf("%d lines, %d watchers; want 5 and 2 or more (a long line may come whole in a read buffer grown for what came after the last)", len(lines), len(watches))
			}
			if watches[0].done != nil {
				t.Fatal("the first long line spilled, yet its watcher was given it")
			}
			for i, w := range watches[1:] {
				if w.ended != 1 || w.done == nil {
					t.Fatalf("watcher %d: Done %d times, with %d bytes", i+1, w.ended, len(w.done))
				}
				k := slices.IndexFunc(lines, func(l []byte) bool { return unsafe.SliceData(l) == unsafe.SliceData(w.done) })
				if k < 0 || len(lines[k]) != len(w.done) || string(w.done) != long {
					t.Fatalf("watcher %d: Done with %d bytes that are not a line returned", i+1, len(w.done))
				}
				if len(w.pieces) == 0 || !bytes.Equal(w.pieces[0], w.first) {
					t.Fatalf("watcher %d: first piece is not the line's first bytes", i+1)
				}
				for k, p := range w.pieces {
					if unsafe.SliceData(p) != unsafe.SliceData(w.done) || !bytes.HasPrefix([]byte(long), p) {
						t.Fatalf("watcher %d: piece %d is not a prefix of the line in its memory", i+1, k)
					}
					if k > 0 && len(p) <= len(w.pieces[k-1]) {
						t.Fatalf("watcher %d: piece %d did not grow", i+1, k)
					}
				}
			}
		})
	}
}

// A line that outgrows its buffer, passes the limit or is cut by the end
// of the stream is not returned in the memory the watcher saw: Done(nil).
func TestLineWatcherAbandoned(t *testing.T) {
	small := `"` + strings.Repeat("x", 300) + `"`
	big := `"` + strings.Repeat("y", 5000) + `"`
	for _, c := range []struct {
		name, input string
		limit       int
	}{
		{"spilled", small + "\n" + big + "\n", 1 << 20},
		{"too large", big + "\n", 1000},
		{"cut", big, 1 << 20},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, watches := watchAll(t, strings.NewReader(c.input), c.limit, 64)
			w := watches[len(watches)-1]
			if w.ended != 1 || w.done != nil {
				t.Fatalf("Done %d times, with %d bytes; want once, with nil", w.ended, len(w.done))
			}
		})
	}
}

// Unset, the hook costs a long line nothing: no allocation beyond the
// line's own buffer.
func TestLineWatchUnsetAllocatesNothing(t *testing.T) {
	line := strings.Repeat("z", 4000) + "\n"
	r := &repeatReader{line: line}
	lr := newLineReaderSize(r, 1<<20, 64)
	lr.readLine() // sizes the hint
	allocs := testing.AllocsPerRun(20, func() {
		if _, err := lr.readLine(); err != nil {
			t.Fatal(err)
		}
	})
	if allocs > 1 {
		t.Fatalf("%v allocations a long line; want 1 (its buffer)", allocs)
	}
}
