package jsonrpc

import (
	"io"
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
