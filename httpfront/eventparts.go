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
		for len(p) > 0 {
			if afterCR && p[0] == '\n' {
				p = p[1:]
				afterCR = false
				continue
			}
			afterCR = false
			n := bytes.IndexAny(p, "\r\n")
			if n < 0 {
				if _, err := w.Write(p); err != nil {
					return err
				}
				break
			}
			if n > 0 {
				if _, err := w.Write(p[:n]); err != nil {
					return err
				}
			}
			if _, err := io.WriteString(w, "\ndata: "); err != nil {
				return err
			}
			afterCR = p[n] == '\r'
			p = p[n+1:]
		}
	}
	_, err := io.WriteString(w, "\n\n")
	return err
}
