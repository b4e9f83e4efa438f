package policy

import (
	"bytes"
	"fmt"
	"sync"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
	"unsafe"
)

// rewriteStrings calls visit with every string value of the JSON text msg
// (member names are not visited), unescaped, in document order. Where visit
// returns a different string and true, that string replaces the value,
// JSON-escaped; every other byte of msg is copied as it was. When nothing is
// replaced, msg itself is returned: no copy, no allocation.
//
// The string visit receives shares memory with msg or with a scratch buffer:
// it is valid during the call only and must not be kept (the detectors keep
// no text). That is what makes the common case, a message with nothing to
// find, cost one pass and no allocation.
//
// msg is expected to be valid JSON (the gateway has decoded it); the walker
// does not validate it. An error means it could not even find the strings:
// an unterminated string or a bad escape. The error gives an offset, never
// the text.
func rewriteStrings(msg []byte, visit func(s string) (string, bool)) ([]byte, error) {
	var out []byte // nil until the first replacement
	copied := 0    // msg[:copied] is in out
	var scratch *[]byte
	defer func() {
		if scratch != nil && cap(*scratch) <= maxPooledScratch {
			scratches.Put(scratch)
		}
	}()
	for i := 0; ; {
		q := bytes.IndexByte(msg[i:], '"')
		if q < 0 {
			break
		}
		open := i + q
		end, escaped := stringEnd(msg, open+1)
		if end < 0 {
			return nil, fmt.Errorf("unterminated string at byte %d", open)
		}
		i = end + 1
		if memberName(msg, i) {
			continue
		}
		body := msg[open+1 : end]
		var s string
		if !escaped && utf8.Valid(body) {
			s = view(body)
		} else {
			if scratch == nil {
				scratch = scratches.Get().(*[]byte)
			}
			var err error
			if *scratch, err = unescape((*scratch)[:0], body); err != nil {
				return nil, fmt.Errorf("string at byte %d: %v", open, err)
			}
			s = view(*scratch)
		}
		repl, ok := visit(s)
		if !ok || repl == s {
			continue
		}
		if out == nil {
			out = make([]byte, 0, len(msg)+len(repl)-len(body))
		}
		out = append(out, msg[copied:open]...)
		out = appendJSONString(out, repl)
		copied = end + 1
	}
	if out == nil {
		return msg, nil
	}
	return append(out, msg[copied:]...), nil
}

// scratches hold the unescaped form of strings with escapes (most text
// content: every line break is one), so that reading them allocates
// nothing once warm.
var scratches = sync.Pool{New: func() any { return new([]byte) }}

// maxPooledScratch bounds the scratch kept for reuse: one huge string must
// not pin its size in memory.
const maxPooledScratch = 256 << 10

// view returns b as a string without copying. The caller must not change b
// while the string is in use, nor let the string outlive that use.
func view(b []byte) string {
	return unsafe.String(unsafe.SliceData(b), len(b))
}

// stringEnd returns the index of the quote that closes the string whose
// body starts at msg[p], and whether the body holds an escape; -1 when the
// string is not closed. Each byte is searched at most twice (once for a
// quote, once for a backslash), so a long string full of escapes stays
// linear.
func stringEnd(msg []byte, p int) (end int, escaped bool) {
	for {
		q := bytes.IndexByte(msg[p:], '"')
		if q < 0 {
			return -1, escaped
		}
		q += p
		for {
			b := bytes.IndexByte(msg[p:q], '\\')
			if b < 0 {
				return q, escaped
			}
			escaped = true
			p += b + 2 // the backslash and the byte it escapes
			if p > q {
				break // it escaped the quote at q: look further
			}
		}
	}
}

// memberName reports whether the string that ended just before msg[i] is a
// member name: in valid JSON, only a name is followed by a colon.
func memberName(msg []byte, i int) bool {
	for ; i < len(msg); i++ {
		switch msg[i] {
		case ' ', '\t', '\n', '\r':
			continue
		case ':':
			return true
		}
		return false
	}
	return false
}

// unescape appends the string a JSON string body stands for to dst, as
// encoding/json reads it: invalid UTF-8 and unpaired surrogates become
// U+FFFD. Runs between escapes are copied whole.
func unescape(dst, body []byte) ([]byte, error) {
	for i := 0; i < len(body); {
		run := body[i:]
		if b := bytes.IndexByte(run, '\\'); b >= 0 {
			run = run[:b]
		}
		if utf8.Valid(run) {
			dst = append(dst, run...)
		} else {
			dst = appendReplacingInvalid(dst, run)
		}
		i += len(run)
		if i == len(body) {
			break
		}
		if i+1 >= len(body) {
			return nil, fmt.Errorf("escape at the end")
		}
		switch e := body[i+1]; e {
		case '"', '\\', '/':
			dst = append(dst, e)
		case 'b':
			dst = append(dst, '\b')
		case 'f':
			dst = append(dst, '\f')
		case 'n':
			dst = append(dst, '\n')
		case 'r':
			dst = append(dst, '\r')
		case 't':
			dst = append(dst, '\t')
		case 'u':
			r := hex4(body[i:])
			if r < 0 {
				return nil, fmt.Errorf("invalid \\u escape at byte %d", i)
			}
			i += 6
			if utf16.IsSurrogate(r) {
				if r2 := hex4(body[i:]); r2 >= 0 {
					if pair := utf16.DecodeRune(r, r2); pair != unicode.ReplacementChar {
						dst = utf8.AppendRune(dst, pair)
						i += 6
						continue
					}
				}
				r = unicode.ReplacementChar
			}
			dst = utf8.AppendRune(dst, r)
			continue
		default:
			return nil, fmt.Errorf("invalid escape at byte %d", i)
		}
		i += 2
	}
	return dst, nil
}

// appendReplacingInvalid appends run with each byte that is not part of a
// valid UTF-8 sequence replaced by U+FFFD, as encoding/json does (one
// replacement per byte, unlike bytes.ToValidUTF8).
func appendReplacingInvalid(dst, run []byte) []byte {
	for len(run) > 0 {
		r, size := utf8.DecodeRune(run)
		if r == utf8.RuneError && size == 1 {
			dst = utf8.AppendRune(dst, unicode.ReplacementChar)
		} else {
			dst = append(dst, run[:size]...)
		}
		run = run[size:]
	}
	return dst
}

// hex4 reads the \uXXXX escape at the start of b, or returns -1.
func hex4(b []byte) rune {
	if len(b) < 6 || b[0] != '\\' || b[1] != 'u' {
		return -1
	}
	var r rune
	for _, c := range b[2:6] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			c = c - 'A' + 10
		default:
			return -1
		}
		r = r<<4 | rune(c)
	}
	return r
}

// appendJSONString appends s as a JSON string literal: quotes, backslashes
// and control characters escaped, invalid UTF-8 as U+FFFD, U+2028 and
// U+2029 escaped (as encoding/json does, for JavaScript readers); HTML
// characters are left alone.
func appendJSONString(dst []byte, s string) []byte {
	const hex = "0123456789abcdef"
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' && c < utf8.RuneSelf {
			i++
			continue
		}
		if c < utf8.RuneSelf {
			dst = append(dst, s[start:i]...)
			switch c {
			case '"', '\\':
				dst = append(dst, '\\', c)
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 || r == '\u2028' || r == '\u2029' {
			dst = append(dst, s[start:i]...)
			if r == utf8.RuneError {
				dst = append(dst, `\ufffd`...)
			} else {
				dst = append(dst, '\\', 'u', '2', '0', '2', hex[r&0xf])
			}
			i += size
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}
