package httpfront

import (
	"bytes"
	"io"
)

// writeEvent writes one "message" event whose data is the parts joined,
// as sse.Write writes it (each line break of the data starts a new data
// line), without joining or copying them: the result of many megabytes
// that most events of a big answer are goes to w as it is, between the
// event's few bytes of framing.
func writeEvent(w io.Writer, parts [][]byte) error {
	if _, err := io.WriteString(w, "event: message\ndata: "); err != nil {
		return err
	}
	afterCR := false // the last byte written was a \r: a \n next is the same break
	for _, p := range parts {
		// Where the next \r and \n are, each found by a vectorised search
		// and looked for again only once passed: JSON has none in most
		// messages, and a part is then searched twice, as fast as memory
		// goes.
		cr, lf := bytes.IndexByte(p, '\r'), bytes.IndexByte(p, '\n')
		at := 0
		for at < len(p) {
			if afterCR && p[at] == '\n' {
				at++
				afterCR = false
				continue
			}
			afterCR = false
			if cr >= 0 && cr < at {
				cr = indexFrom(p, at, '\r')
			}
			if lf >= 0 && lf < at {
				lf = indexFrom(p, at, '\n')
			}
			n := lf
			if n < 0 || cr >= 0 && cr < n {
				n = cr
			}
			if n < 0 {
				if _, err := w.Write(p[at:]); err != nil {
					return err
				}
				break
			}
			if n > at {
				if _, err := w.Write(p[at:n]); err != nil {
					return err
				}
			}
			if _, err := io.WriteString(w, "\ndata: "); err != nil {
				return err
			}
			afterCR = p[n] == '\r'
			at = n + 1
		}
	}
	_, err := io.WriteString(w, "\n\n")
	return err
}

// indexFrom is the index of the first c in p at or after from, or -1.
func indexFrom(p []byte, from int, c byte) int {
	if i := bytes.IndexByte(p[from:], c); i >= 0 {
		return from + i
	}
	return -1
}
