package policy

import (
	"unicode"
	"unicode/utf8"
)

// prescanWalk is stringWalk and the shared decoding (sharedstrings.go)
// made resumable: it finds and decodes the strings of a line that is still
// arriving, as far as its bytes go, and goes on from there when more has
// come. It never stops inside an escape or a UTF-8 sequence, so that what
// it decodes in pieces is what decoding the whole line gives; and it tells
// a member name from a value only once the byte after the string is in.
type prescanWalk struct {
	at int // outside a string: where the next one is looked for
	// The string in progress (open >= 0): its opening quote, where reading
	// it goes on (p), and, once it has an escape or a byte past ASCII,
	// where its text starts in decoded (from >= 0; plain so far: -1).
	// closed, once its closing quote is found, is where that is (-1
	// before): the string waits for the byte after it, which says whether
	// it is a member name.
	open, p, from, closed int
	decoded               []byte
	// text is the string in progress's text so far, or its whole text
	// once closed.
	text string
	// last is the string step completed last (stepString).
	last jsonString
}

func newPrescanWalk() prescanWalk { return prescanWalk{open: -1, closed: -1} }

// walkStep is what step found.
type walkStep uint8

const (
	stepMore   walkStep = iota // the bytes so far are read: more must come
	stepString                 // a string value is complete: w.open, w.closed, w.text
	stepName                   // a member name is complete (not recorded)
	stepBad                    // the line is not JSON the walk can read
)

// step reads line (the line so far, whole when final) from where it
// stopped, up to the next complete string.
func (w *prescanWalk) step(line []byte, final bool) walkStep {
	if w.open < 0 {
		open := nextQuote(line, w.at)
		if open < 0 {
			w.at = len(line)
			return stepMore
		}
		w.open, w.p, w.from, w.closed = open, open+1, -1, -1
	}
	if w.closed < 0 {
		if w.from < 0 {
			end := nextSpecial(line, w.p)
			switch {
			case end == len(line) && final:
				return stepBad
			case end == len(line):
				w.p, w.text = end, view(line[w.open+1:end])
				return stepMore
			case line[end] == '"':
				w.closed, w.text = end, view(line[w.open+1:end]) // plain ASCII, the common case
			default:
				// Decoded from its start, as stringWalk.unescape does: the
				// plain bytes before the first escape are copied too.
				if w.decoded == nil {
					// Decoded, the strings from here on are no longer than
					// the rest of the line's buffer, but for invalid UTF-8
					// (see sharedStrings.decode).
					w.decoded = make([]byte, 0, max(cap(line)-w.open, 64))
				}
				w.from, w.p = len(w.decoded), w.open+1
			}
		}
		if w.closed < 0 {
			k, dst, closed, ok := readStringPart(line, w.p, w.decoded, final)
			if !ok {
				return stepBad
			}
			w.decoded, w.p = dst, k
			w.text = view(w.decoded[w.from:])
			if !closed {
				return stepMore
			}
			w.closed = k
		}
	}
	after := w.closed + 1
	for after < len(line) && (line[after] == ' ' || line[after] == '\t' || line[after] == '\n' || line[after] == '\r') {
		after++
	}
	if after == len(line) && !final {
		return stepMore
	}
	w.last = jsonString{w.open, w.closed, w.text}
	w.open, w.at = -1, w.closed+1
	if after < len(line) && line[after] == ':' {
		return stepName
	}
	return stepString
}

// readStringPart is readString for a line that may not be all in: it
// reads the string whose body goes on at line[p] as far as line goes,
// appending its text to dst, and returns where it stopped and whether that
// is the closing quote. Unless final, it stops before an escape or a
// UTF-8 sequence that line does not hold all of (a surrogate's pair may
// follow: twelve bytes), so that going on from there later decodes what
// readString does. ok is false for what readString fails on.
func readStringPart(line []byte, p int, dst []byte, final bool) (k int, _ []byte, closed, ok bool) {
	for {
		k, dst = appendPlain(dst, line, p)
		if k == len(line) {
			return k, dst, false, !final
		}
		switch c := line[k]; {
		case c == '"':
			return k, dst, true, true
		case c == '\\':
			if k+1 < len(line) && shortEscapes[line[k+1]] != 0 {
				dst = append(dst, shortEscapes[line[k+1]])
				p = k + 2
				continue
			}
			if !final && (k+1 >= len(line) || line[k+1] == 'u' && len(line)-k < 12) {
				return k, dst, false, true
			}
			var err error
			if p, dst, err = appendEscape(line, k, dst); err != nil {
				return k, dst, false, false
			}
		default:
			if !final && !utf8.FullRune(line[k:]) {
				return k, dst, false, true
			}
			r, size := utf8.DecodeRune(line[k:])
			if r == utf8.RuneError && size == 1 {
				dst = utf8.AppendRune(dst, unicode.ReplacementChar)
			} else {
				dst = append(dst, line[k:k+size]...)
			}
			p = k + size
		}
	}
}
