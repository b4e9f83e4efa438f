package proxy

import (
	"bytes"
	"io"
	"unicode/utf8"
)

// maxStderrLine is the most of one stderr line that is logged or kept as
// the last line for error messages.
const maxStderrLine = 4096

// readStderrLines passes each line read from r to emit, until r ends, in
// memory bounded whatever r sends: a line longer than maxStderrLine is
// passed on cut, with "…", as soon as it reaches the limit, and the rest of
// it is skipped up to its end. A carriage return ends a line too, so that a
// progress bar redrawn with \r is one line per redraw, not one unending
// line. Empty lines are not passed on. redactCut, if not nil, is applied to
// what is kept of a cut line: a secret cut there leaves a start that
// redaction of the whole line cannot recognise (config.Config.RedactCut).
func readStderrLines(r io.Reader, redactCut func(string) string, emit func(line string)) {
	buf := make([]byte, 32<<10)
	line := make([]byte, 0, maxStderrLine)
	skipping := false // the line was cut and passed on; skip to its end
	for {
		n, err := r.Read(buf)
		data := buf[:n]
		for len(data) > 0 {
			end := bytes.IndexAny(data, "\r\n")
			part := data
			if end >= 0 {
				part = data[:end]
			}
			if !skipping {
				if room := maxStderrLine - len(line); len(part) > room {
					line = append(line, part[:room]...)
					kept := string(trimPartialRune(line))
					if redactCut != nil {
						kept = redactCut(kept)
					}
					emit(kept + "…")
					line, skipping = line[:0], true
				} else {
					line = append(line, part...)
				}
			}
			if end < 0 {
				break
			}
			if len(line) > 0 {
				emit(string(line))
			}
			line, skipping = line[:0], false
			data = data[end+1:]
		}
		if err != nil {
			if len(line) > 0 {
				emit(string(line))
			}
			return
		}
	}
}

// trimPartialRune drops a UTF-8 sequence cut off at the end of b.
func trimPartialRune(b []byte) []byte {
	for i := len(b) - 1; i >= 0 && i >= len(b)-utf8.UTFMax; i-- {
		if utf8.RuneStart(b[i]) {
			if !utf8.FullRune(b[i:]) {
				return b[:i]
			}
			break
		}
	}
	return b
}
