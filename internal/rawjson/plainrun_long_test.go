package rawjson

import (
	"bytes"
	"strings"
	"testing"
)

// TestPlainRunLong: on a run longer than a window (longPlainRun's path),
// plainRun stops exactly on the first quote, backslash or control byte
// wherever it is, in the first block, inside a window, on a window's
// edge or in the tail, and never passes one; a run without one is
// skipped to its end.
func TestPlainRunLong(t *testing.T) {
	const size = 3*longRunWindow + 100
	plain := bytes.Repeat([]byte("plain text, \x7f\x80\xff UTF-8 é. "), size/20+1)[:size]
	if got := plainRun(plain, 0); got < size-7 {
		t.Fatalf("plainRun of %d plain bytes = %d, want the end", size, got)
	}
	positions := []int{0, 7, 8, 31, 39, 40, 41, 100, 263, 264, 295, 296, 300, longRunWindow - 1, longRunWindow, longRunWindow + 39,
		longRunWindow + 40, 2*longRunWindow + 40, 2*longRunWindow + 41, 3 * longRunWindow, size - 9, size - 8}
	for _, stop := range []byte{'"', '\\', 0, 0x1f, '\n'} {
		for _, at := range positions {
			for _, from := range []int{0, 1, 5} {
				if from > at {
					continue
				}
				b := bytes.Clone(plain)
				b[at] = stop
				// A second special byte after the first must not be
				// found instead.
				if at+50 < size {
					b[at+50] = '"'
				}
				if got := plainRun(b, from); got != at {
					t.Errorf("plainRun from %d with %q at %d = %d", from, stop, at, got)
				}
			}
		}
	}
}

// BenchmarkStringRestEscaped: a long string of escaped JSON (a tool's
// text that is itself JSON), a backslash every few bytes: the long-run
// path must not slow it down.
func BenchmarkStringRestEscaped(b *testing.B) {
	s := []byte(strings.Repeat(`{\"id\":12,\"name\":\"a tool\",\"ok\":true}, `, 1<<15) + `"`)
	b.SetBytes(int64(len(s)))
	for b.Loop() {
		if end, more, _ := stringRest(s, 0); end != len(s) || more {
			b.Fatal(end, more)
		}
	}
}
