package policy

import (
	"testing"
	"unicode"
	"unicode/utf8"
)

// readStringReference is readString as it was before appendPlain: each
// run of plain bytes found by nextSpecial and copied by append. Kept for
// FuzzSplitDecoding, which reads every string with both.
func readStringReference(msg []byte, p int, dst []byte) (int, []byte, error) {
	for {
		k := nextSpecial(msg, p)
		dst = append(dst, msg[p:k]...)
		if k == len(msg) {
			return 0, dst, errNotTerminated
		}
		switch c := msg[k]; {
		case c == '"':
			return k, dst, nil
		case c == '\\':
			if k+1 < len(msg) && shortEscapes[msg[k+1]] != 0 {
				dst = append(dst, shortEscapes[msg[k+1]])
				p = k + 2
				continue
			}
			var err error
			if p, dst, err = appendEscape(msg, k, dst); err != nil {
				return 0, nil, err
			}
		default:
			r, size := utf8.DecodeRune(msg[k:])
			if r == utf8.RuneError && size == 1 {
				dst = utf8.AppendRune(dst, unicode.ReplacementChar)
			} else {
				dst = append(dst, msg[k:k+size]...)
			}
			p = k + size
		}
	}
}

// BenchmarkReadString is readString on the text of a 10 MiB mixed result
// (JSON, logs and prose: an escape every few dozen bytes) into a buffer
// with room for it, as the shared decoding reads it; reference is the
// loop it replaced.
func BenchmarkReadString(b *testing.B) {
	msg := []byte(toolResult(corpusText(b, "mixed", 10<<20)))
	w := stringWalk{msg: msg}
	for w.next() && !w.escaped() {
	}
	dst := make([]byte, 0, len(msg))
	for _, bc := range []struct {
		name string
		read func([]byte, int, []byte) (int, []byte, error)
	}{{"new", readString}, {"reference", readStringReference}} {
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(int64(len(msg)))
			reportCPU(b, len(msg), func() {
				if _, _, err := bc.read(msg, w.open+1, dst); err != nil {
					b.Fatal(err)
				}
			})
		})
	}
}
