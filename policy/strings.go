package policy

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/bits"
	"slices"
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
	return rewriteJSONStrings(msg, false, func(s string, _ bool) (string, bool) { return visit(s) })
}

// rewriteJSONStrings is rewriteStrings that also visits member names when
// names is true (name tells visit which it has).
func rewriteJSONStrings(msg []byte, names bool, visit func(s string, name bool) (string, bool)) ([]byte, error) {
	var repl string
	return appendJSONStrings(msg, names, func(s string, name bool) bool {
		var ok bool
		repl, ok = visit(s, name)
		return ok && repl != s
	}, func(dst []byte) []byte { return appendJSONString(dst, repl) })
}

// appendJSONStrings is the walk of rewriteJSONStrings, in two steps: visit
// says whether to replace a string, and write then appends the
// replacement to the output, as a JSON string literal (at once, before the
// next string is visited). A replacement made of pieces of a big string
// (a redacted text) is so written straight into the output, not built
// first as a string of its own and copied.
func appendJSONStrings(msg []byte, names bool, visit func(s string, name bool) bool, write func(dst []byte) []byte) ([]byte, error) {
	var out []byte // nil until the first replacement
	copied := 0    // msg[:copied] is in out
	var scratch *[]byte
	defer func() {
		if scratch != nil && cap(*scratch) <= maxPooledScratch {
			scratches.Put(scratch)
		}
	}()
	it := stringWalk{msg: msg}
	for it.next() {
		if it.escaped() {
			if scratch == nil {
				scratch = scratches.Get().(*[]byte)
			}
			var err error
			if *scratch, err = it.unescape((*scratch)[:0]); err != nil {
				return nil, err
			}
		}
		if it.name && !names {
			continue
		}
		if !visit(it.text, it.name) {
			continue
		}
		if out == nil {
			// Room for the message and a few markers longer than what they
			// replace: one allocation, as a rule.
			out = make([]byte, 0, len(msg)+len(msg)/64+256)
		}
		out = append(out, msg[copied:it.open]...)
		out = write(out)
		copied = it.end + 1
	}
	if out == nil {
		return msg, nil
	}
	return append(out, msg[copied:]...), nil
}

// stringWalk finds the strings of a JSON text one after the other, in
// document order: what appendJSONStrings and the shared decoding
// (sharedstrings.go) both read, so that they read the same. A string of
// plain ASCII is taken as it is; one with an escape or a byte past ASCII
// is unescaped by the caller (unescape), into a buffer of its choice.
type stringWalk struct {
	msg []byte
	at  int // where the next string is looked for
	// The string found last: its quotes at msg[open] and msg[end] (until
	// it is unescaped, end is its first escape or byte past ASCII), its
	// text and whether it is a member name (known once unescaped).
	open, end int
	text      string
	name      bool
	// splitsWasted counts the strings split that ended before the split
	// point (unescapeSplit): past maxSplitsWasted, none is split again.
	splitsWasted int
}

// next finds the next string; false at the end of the text.
func (w *stringWalk) next() bool {
	open := nextQuote(w.msg, w.at)
	if open < 0 {
		return false
	}
	w.open, w.end = open, nextSpecial(w.msg, open+1)
	if !w.escaped() {
		w.text = view(w.msg[open+1 : w.end]) // plain ASCII, the common case
		w.found()
	}
	return true
}

// escaped reports whether the string found last is yet to be unescaped.
func (w *stringWalk) escaped() bool {
	return w.end == len(w.msg) || w.msg[w.end] != '"'
}

// unescape reads the string found last, appending its text to dst (the
// text is a view of what it appends, valid while dst's bytes are). Unless
// dst has room for the rest of the message, it is first grown to fit the
// whole string: grown by appends, a text of megabytes would be copied over
// and over into buffers 1.25 times bigger, allocating several times its
// size.
func (w *stringWalk) unescape(dst []byte) ([]byte, error) {
	if cap(dst)-len(dst) < len(w.msg)-w.end {
		dst = slices.Grow(dst, closingQuote(w.msg, w.end)-w.end)
	}
	from := len(dst)
	end, dst, err := readString(w.msg, w.open+1, dst)
	if err != nil {
		return nil, w.readError(err)
	}
	w.end, w.text = end, view(dst[from:])
	w.found()
	return dst, nil
}

// readError is readString's err, for the string found last.
func (w *stringWalk) readError(err error) error {
	return fmt.Errorf("string at byte %d: %v", w.open, err)
}

// found notes where the string found last ends.
func (w *stringWalk) found() {
	w.at = w.end + 1
	w.name = memberName(w.msg, w.at)
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

// closingQuote returns the index of the first quote at or after msg[i]
// that is not escaped, or len(msg): where the string msg[i] is in ends.
func closingQuote(msg []byte, i int) int {
	for i < len(msg) {
		q := bytes.IndexByte(msg[i:], '"')
		if q < 0 {
			break
		}
		i += q
		backslashes := 0
		for k := i - 1; k >= 0 && msg[k] == '\\'; k-- {
			backslashes++
		}
		if backslashes%2 == 0 {
			return i
		}
		i++
	}
	return len(msg)
}

// nextQuote returns the index of the first quote in msg at or after i, or
// -1. Between strings there are mostly a few bytes (`":"`, `", "`): a plain
// loop finds those before a call to IndexByte would have started.
func nextQuote(msg []byte, i int) int {
	for end := min(i+16, len(msg)); i < end; i++ {
		if msg[i] == '"' {
			return i
		}
	}
	if i < len(msg) {
		if q := bytes.IndexByte(msg[i:], '"'); q >= 0 {
			return i + q
		}
	}
	return -1
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

// readString reads the JSON string whose body starts at msg[p]: it
// returns the index of its closing quote, with the string appended to dst
// as encoding/json reads it (invalid UTF-8 and unpaired surrogates become
// U+FFFD). Runs of plain ASCII are copied whole. A string not terminated
// within msg is errNotTerminated, with dst as it was read so far.
func readString(msg []byte, p int, dst []byte) (int, []byte, error) {
	for {
		var k int
		k, dst = appendPlain(dst, msg, p)
		if k == len(msg) {
			return 0, dst, errNotTerminated
		}
		switch c := msg[k]; {
		case c == '"':
			return k, dst, nil
		case c == '\\':
			// The escapes of one byte (a line break, a quote) are most of
			// them in text: taken here, without appendEscape's call.
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

// appendPlain appends to dst the bytes of msg from p to the first quote,
// backslash or byte past ASCII, and returns that byte's index (len(msg)
// if there is none). A text with escapes (JSON in a tool's text, logs)
// has one every few dozen bytes: found by nextSpecial and copied by
// append, each run of plain bytes paid two calls, most of the time taken
// to decode it. Where dst has room, the first words of a run are
// instead stored as they are loaded, then tested: the bytes stored past
// the special one are in dst's room, not its length, and are written
// over by what comes next. A long run goes on with nextSpecial's vector
// search and one copy.
func appendPlain(dst, msg []byte, p int) (int, []byte) {
	const (
		ones  = 0x0101010101010101
		highs = 0x8080808080808080
	)
	n := len(dst)
	room := dst[:cap(dst)]
	for words := 0; words < plainWords; {
		if len(msg)-p < 8 || len(room)-n < 8 {
			break
		}
		x := binary.LittleEndian.Uint64(msg[p:])
		binary.LittleEndian.PutUint64(room[n:], x)
		q := x ^ ('"' * ones)
		s := x ^ ('\\' * ones)
		m := ((q-ones)&^q | (s-ones)&^s | x) & highs
		if m == 0 {
			p += 8
			n += 8
			words++
			continue
		}
		z := bits.TrailingZeros64(m) / 8
		p += z
		n += z
		// A one-byte escape (a line break, a quote in JSON text) is taken
		// here: no call for it.
		if msg[p] != '\\' || len(msg)-p < 2 || shortEscapes[msg[p+1]] == 0 {
			return p, room[:n]
		}
		room[n] = shortEscapes[msg[p+1]]
		p += 2
		n++
		words = 0
	}
	k := nextSpecial(msg, p)
	return k, append(room[:n], msg[p:k]...)
}

// plainWords is how many words appendPlain stores and tests before it
// takes a run for a long one: past a line of text.
const plainWords = 16

// shortEscapes maps the byte after a backslash to what the escape stands
// for, where that is one byte (0: none is).
var shortEscapes = [256]byte{'"': '"', '\\': '\\', '/': '/', 'b': '\b', 'f': '\f', 'n': '\n', 'r': '\r', 't': '\t'}

// appendEscape appends what the escape at msg[k] stands for to dst and
// returns the index after it.
func appendEscape(msg []byte, k int, dst []byte) (int, []byte, error) {
	if k+1 >= len(msg) {
		return 0, nil, fmt.Errorf("escape at the end")
	}
	switch e := msg[k+1]; e {
	case '"', '\\', '/':
		return k + 2, append(dst, e), nil
	case 'b':
		return k + 2, append(dst, '\b'), nil
	case 'f':
		return k + 2, append(dst, '\f'), nil
	case 'n':
		return k + 2, append(dst, '\n'), nil
	case 'r':
		return k + 2, append(dst, '\r'), nil
	case 't':
		return k + 2, append(dst, '\t'), nil
	case 'u':
		r := hex4(msg[k:])
		if r < 0 {
			return 0, nil, fmt.Errorf("invalid \\u escape at byte %d", k)
		}
		k += 6
		if utf16.IsSurrogate(r) {
			if r2 := hex4(msg[k:]); r2 >= 0 {
				if pair := utf16.DecodeRune(r, r2); pair != unicode.ReplacementChar {
					return k + 6, utf8.AppendRune(dst, pair), nil
				}
			}
			r = unicode.ReplacementChar
		}
		return k, utf8.AppendRune(dst, r), nil
	}
	return 0, nil, fmt.Errorf("invalid escape at byte %d", k)
}

// nextSpecial returns the index of the first byte of b at or after i that
// is a quote, a backslash or not ASCII; len(b) if there is none. It looks
// at eight bytes at a time: strings are most of a message, and most of
// their bytes are plain.
func nextSpecial(b []byte, i int) int {
	const (
		ones  = 0x0101010101010101
		highs = 0x8080808080808080
	)
	if len(b)-i > longRun {
		// Past its first bytes, a string may be megabytes long (a tool
		// result's text): look for each kind of special byte with what is
		// fastest for it, a window at a time.
		if k := nextSpecial(b[:i+longRun], i); k < i+longRun {
			return k
		}
		return nextSpecialLong(b, i+longRun)
	}
	for ; i+8 <= len(b); i += 8 {
		x := binary.LittleEndian.Uint64(b[i:])
		q := x ^ ('"' * ones)
		s := x ^ ('\\' * ones)
		// (v-ones)&^v&highs has the high bit of v's first zero byte set
		// (and maybe of later ones): the lowest bit set is exact.
		if m := ((q-ones)&^q | (s-ones)&^s | x) & highs; m != 0 {
			return i + bits.TrailingZeros64(m)/8
		}
	}
	for ; i < len(b); i++ {
		if c := b[i]; c == '"' || c == '\\' || c >= utf8.RuneSelf {
			return i
		}
	}
	return len(b)
}

// longRun is how far nextSpecial looks eight bytes at a time before it
// takes a string for a long one.
const longRun = 512

// nextSpecialLong is nextSpecial for a long run of plain bytes: the quote
// and the backslash found with bytes.IndexByte (vector instructions), the
// first non-ASCII byte 32 bytes at a time, in windows that start small and
// double, so that no search runs far past the first special byte of
// another kind (a text of short lines has a "\\n" every few dozen bytes,
// and its closing quote megabytes away).
func nextSpecialLong(b []byte, i int) int {
	for window := 256; i < len(b); window = min(2*window, 64<<10) {
		w := b[i:min(len(b), i+window)]
		end := len(w)
		if q := bytes.IndexByte(w, '"'); q >= 0 {
			end = q
		}
		if s := bytes.IndexByte(w[:end], '\\'); s >= 0 {
			end = s
		}
		end = firstNonASCII(w[:end])
		if end < len(w) {
			return i + end
		}
		i += len(w)
	}
	return len(b)
}

// firstNonASCII returns the index of the first byte of b that is 0x80 or
// more, or len(b). It reads 64 bytes a step through one slice of fixed
// length, so that the compiler drops the bounds checks of the eight loads:
// with them, this loop was most of the time taken to find the strings of
// a 10 MiB result (16 GB/s; 80 GB/s without).
func firstNonASCII(b []byte) int {
	const highs = 0x8080808080808080
	i := 0
	for ; len(b)-i >= 64; i += 64 {
		w := b[i : i+64 : i+64]
		x := binary.LittleEndian.Uint64(w[0:8]) | binary.LittleEndian.Uint64(w[8:16]) |
			binary.LittleEndian.Uint64(w[16:24]) | binary.LittleEndian.Uint64(w[24:32]) |
			binary.LittleEndian.Uint64(w[32:40]) | binary.LittleEndian.Uint64(w[40:48]) |
			binary.LittleEndian.Uint64(w[48:56]) | binary.LittleEndian.Uint64(w[56:64])
		if x&highs != 0 {
			break
		}
	}
	for ; i < len(b); i++ {
		if b[i] >= utf8.RuneSelf {
			return i
		}
	}
	return len(b)
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
	dst = append(dst, '"')
	dst = appendJSONEscaped(dst, s)
	return append(dst, '"')
}

// appendJSONEscaped appends s escaped as in a JSON string literal, without
// the quotes. Escaping is per character, so pieces escaped one after the
// other give what their concatenation gives, cut anywhere: a rune cut in
// two is invalid UTF-8 either way, and an invalid byte is replaced alone.
func appendJSONEscaped(dst []byte, s string) []byte {
	const hex = "0123456789abcdef"
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
	return append(dst, s[start:]...)
}
