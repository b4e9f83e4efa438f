package rawjson

import (
	"encoding/binary"
	"math/bits"
)

// Incremental is the validating scanner of scan.go for a message that
// arrives in pieces: a line reader feeds it what it has read so far while
// the rest is still on its way, so that once the last piece comes only
// that piece is left to check. A 50 MiB result was read whole and then
// scanned whole; the scan (a tenth of a second's share of the gateway's
// time on the result) now overlaps the transfer.
//
// It accepts exactly what json.Valid accepts, for a top-level object, and
// splits that object, and the object value of a member named "params" or
// "result", as splitValidating does. What it cannot settle cheaply (an
// escaped key at the top level, a number longer than maxPending) it gives
// up on: Finish then reports false and the caller validates the whole the
// usual way, which also words the error of invalid input. A scan never
// goes back more than maxPending bytes, so feeding it costs at most twice
// the input, however it is cut.
type Incremental struct {
	i     int       // where scanning resumes
	state scanState //
	stack []bool    // the open containers, true for an object; stack[0] is the top level

	strStart int  // stString: the string's opening quote
	strKey   bool // stString: the string is a key
	strEsc   bool // stString: a backslash was met in it so far

	top    []span      // the top-level members
	key1   span        // the top-level member in progress
	inner  []span      // the members of nested (see below)
	key2   span        // the nested member in progress
	nested int         // the index in top of the member whose object inner splits; -1: none
	inNest bool        // stack[1] is that object
	objEnd int         // stDone: the index just past the top-level object
	uriKey bool        // a key "uri" (or an escaped key) was seen below the top level
	result bool        // nested is the member "result" (not "params")
	objs   objectsScan // nested's array of objects (incremental_objects.go)
}

// span locates a member in the input: its key's literal and its value.
type span struct{ keyStart, keyEnd, valStart, valEnd int }

type scanState uint8

const (
	stTop     scanState = iota // the top-level object's '{' is next
	stValue                    // a value is next
	stAfter                    // a value ended: ',' or a closer is next
	stKey                      // a key is next
	stColon                    // a key ended: ':' is next
	stString                   // inside a string, at i
	stObjOpen                  // just after '{': '}' or a key
	stArrOpen                  // just after '[': ']' or a value
	stDone                     // the object is whole: only whitespace may follow
	stGivenUp                  // invalid, or not worth it: the caller scans the whole
)

// maxPending bounds how far a scan goes back to redo a token cut by the
// end of what has arrived (a number; strings resume where they were).
const maxPending = 4 << 10

// Reset makes s ready for a new message, keeping its memory, but not what
// a message of many members grew: a line reader keeps s between lines.
func (s *Incremental) Reset() {
	objs := s.objs
	objs.reset()
	*s = Incremental{stack: s.stack[:0], top: keptSpans(s.top), inner: keptSpans(s.inner), nested: -1, objs: objs}
}

// maxKeptSpans bounds the spans a scanner keeps for the next message.
const maxKeptSpans = 256

func keptSpans(spans []span) []span {
	if cap(spans) > maxKeptSpans {
		return nil
	}
	return spans[:0]
}

// Feed scans b, all of the message that has arrived so far (each call's b
// extends the last one's, though it may have moved in memory).
func (s *Incremental) Feed(b []byte) {
	s.scan(b, false)
}

// Finish scans the rest of b, the whole message, and reports whether it
// is one valid JSON object; if it is, its split is remembered for Members,
// MembersNested and SplitValid to find (see memo.go). False says nothing
// about b: the caller validates it the usual way.
func (s *Incremental) Finish(b []byte) bool {
	msg, entry, ok := s.finish(b)
	if !ok {
		return false
	}
	remember(msg, entry)
	if entry.innerKey == "" {
		return true
	}
	if v := s.top[s.nested]; v.valEnd-v.valStart >= memoMin { // a smaller value is not remembered: its split would be thrown away
		remember(b[v.valStart:v.valEnd], memoEntry{size: v.valEnd - v.valStart, members: entry.inner, uriKey: s.uriKey, objects: s.objs.split(v.valStart, s.nested, entry.inner)})
	}
	return true
}

// finish is Finish without remembering: the message (b trimmed) and its
// split.
func (s *Incremental) finish(b []byte) ([]byte, memoEntry, bool) {
	s.scan(b, true)
	if s.state != stDone {
		return nil, memoEntry{}, false
	}
	lead := skipSpace(b, 0)
	msg := b[lead:s.objEnd]
	top, ok := s.members(b, s.top, lead, false)
	if !ok {
		return nil, memoEntry{}, false // a duplicate: an error for the usual path to word
	}
	entry := memoEntry{size: len(msg), members: top, uriKey: s.uriKey}
	for _, m := range top {
		entry.uriKey = entry.uriKey || m.key == "uri"
	}
	if s.nested >= 0 {
		if inner, ok := s.members(b, s.inner, s.top[s.nested].valStart, true); ok {
			entry.innerKey, entry.inner = top[s.nested].key, inner
		}
	}
	return msg, entry, true
}

// members turns spans into members whose offsets count from base, or
// reports a duplicate key. Top-level keys are never escaped (scan gives up
// on them); nested ones may be.
func (s *Incremental) members(b []byte, spans []span, base int, escapes bool) ([]memoMember, bool) {
	out := make([]memoMember, 0, len(spans))
	var seen keySet
	var ms MemberList // for seen, which compares keys
	for _, sp := range spans {
		lit := b[sp.keyStart:sp.keyEnd]
		escaped := escapes && indexBackslash(lit) >= 0
		key, err := internKey(lit, escaped)
		if err != nil || seen.repeated(ms, key) {
			return nil, false
		}
		ms = append(ms, Member{Key: key})
		out = append(out, memoMember{key: key, start: sp.valStart - base, end: sp.valEnd - base})
	}
	return out, true
}

func indexBackslash(b []byte) int {
	for i, c := range b {
		if c == '\\' {
			return i
		}
	}
	return -1
}

// scan goes on from s.i as far as b allows. final says that b is all
// there is. The state lives in a local while it runs (a field written
// through s at every token cost a fifth of a list's scan), and a key's
// colon is taken with the key when it follows at once, as it mostly does.
func (s *Incremental) scan(b []byte, final bool) {
	i, state := s.i, s.state
	for {
		switch state {
		case stDone:
			if i = skipSpace(b, i); i < len(b) {
				state = stGivenUp // data after the object
			}
			s.i, s.state = i, state
			return
		case stGivenUp:
			s.state = stGivenUp
			return
		case stString:
			end, more, escaped := stringRest(b, i)
			s.strEsc = s.strEsc || escaped
			switch {
			case end < 0:
				state = stGivenUp
				continue
			case more:
				if final {
					state = stGivenUp
					continue
				}
				s.i, s.state = end, state
				return
			}
			i = end
			if !s.strKey {
				s.valueEnded(end)
				state = stAfter
				continue
			}
			if !s.keyEnded(b, s.strStart, end, s.strEsc) {
				state = stGivenUp
				continue
			}
			state = stColon
			if i < len(b) && b[i] == ':' {
				i++
				state = stValue
			}
			continue
		}
		// The other states start by skipping whitespace.
		if i = skipSpace(b, i); i >= len(b) {
			if final {
				state = stGivenUp
				continue
			}
			s.i, s.state = i, state
			return
		}
		c := b[i]
		switch state {
		case stTop:
			if c != '{' {
				state = stGivenUp
				continue
			}
			s.stack = append(s.stack, true)
			state = stObjOpen
			i++
		case stObjOpen, stArrOpen:
			if c == closer(state == stObjOpen) {
				i++
				state = s.close(i)
				continue
			}
			if state == stObjOpen {
				state = stKey
			} else {
				state = stValue
			}
		case stKey:
			if c != '"' {
				state = stGivenUp
				continue
			}
			s.strStart, s.strKey, s.strEsc, state = i, true, false, stString
			i++
		case stColon:
			if c != ':' {
				state = stGivenUp
				continue
			}
			state = stValue
			i++
		case stAfter:
			object := s.stack[len(s.stack)-1]
			switch c {
			case closer(object):
				i++
				state = s.close(i)
			case ',':
				i++
				if object {
					state = stKey
				} else {
					state = stValue
				}
			default:
				state = stGivenUp
			}
		case stValue:
			if s.inNest || len(s.stack) == 1 {
				s.valueStarts(b, i)
			}
			switch {
			case c == '"':
				s.strStart, s.strKey, s.strEsc, state = i, false, false, stString
				i++
			case c == '{' || c == '[':
				if len(s.stack)+1 > maxDepth {
					state = stGivenUp
					continue
				}
				s.stack = append(s.stack, c == '{')
				if len(s.stack) == 2 && c == '{' && s.nested == len(s.top) {
					s.inNest = true
				}
				state = stArrOpen
				if c == '{' {
					state = stObjOpen
				}
				i++
			default:
				end := scalarEnd(b, i)
				if end < 0 || end == len(b) && !final {
					// Cut by the end of what has arrived, perhaps: a
					// number or a literal resumes from its start.
					if final || len(b)-i > maxPending || end < 0 && !scalarPrefix(b[i:]) {
						state = stGivenUp
						continue
					}
					s.i, s.state = i, state
					return
				}
				i = end
				s.valueEnded(end)
				state = stAfter
			}
		}
	}
}

// scalarEnd returns the index just past the number or literal at b[i], or
// -1.
func scalarEnd(b []byte, i int) int {
	switch c := b[i]; {
	case c == '-' || c >= '0' && c <= '9':
		return scanNumber(b, i)
	case c == 't':
		return literal(b, i, "true")
	case c == 'f':
		return literal(b, i, "false")
	case c == 'n':
		return literal(b, i, "null")
	}
	return -1
}

// scalarPrefix reports whether rest, the end of what has arrived, could be
// the start of a number or a literal that more input completes.
func scalarPrefix(rest []byte) bool {
	for _, lit := range []string{"true", "false", "null"} {
		if len(rest) < len(lit) && string(rest) == lit[:len(rest)] {
			return true
		}
	}
	// A number cut anywhere: digits, and the signs, point and exponent
	// that need more after them.
	for _, c := range rest {
		if !(c >= '0' && c <= '9' || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E') {
			return false
		}
	}
	return len(rest) > 0
}

// valueStarts notes where a member's value starts.
func (s *Incremental) valueStarts(b []byte, i int) {
	if s.inNest {
		taken := len(s.stack) == 2 && s.result && takenArray(b[s.key2.keyStart:s.key2.keyEnd])
		s.objs.valueStarts(b, i, len(s.stack), s.nested, len(s.inner), taken)
	}
	switch {
	case len(s.stack) == 1:
		s.key1.valStart = i
		if b[i] == '{' {
			switch key := string(b[s.key1.keyStart:s.key1.keyEnd]); key {
			case `"params"`, `"result"`:
				s.nested, s.inner, s.result = len(s.top), s.inner[:0], key == `"result"`
			}
		}
	case len(s.stack) == 2 && s.inNest:
		s.key2.valStart = i
	}
}

// valueEnded records the member whose value ends at end, if it is one of
// the split objects'; the scan goes on after it (stAfter).
func (s *Incremental) valueEnded(end int) {
	if s.inNest {
		s.objs.valueEnded(end, len(s.stack))
	}
	switch {
	case len(s.stack) == 1:
		s.key1.valEnd = end
		s.top = append(s.top, s.key1)
	case len(s.stack) == 2 && s.inNest:
		s.key2.valEnd = end
		s.inner = append(s.inner, s.key2)
	}
}

// keyEnded notes the key b[start:end], escaped if it holds a backslash;
// false gives up (an escaped top-level key).
func (s *Incremental) keyEnded(b []byte, start, end int, escaped bool) bool {
	if len(s.stack) == 1 {
		s.key1.keyStart, s.key1.keyEnd = start, end
		return !escaped
	}
	if escaped || string(b[start:end]) == `"uri"` {
		s.uriKey = true
	}
	if len(s.stack) == 2 && s.inNest {
		s.key2.keyStart, s.key2.keyEnd = start, end
	}
	if s.inNest {
		s.objs.keyEnded(start, end, len(s.stack))
	}
	return true
}

// close pops the container that ended just before end, and returns the
// state the scan goes on in.
func (s *Incremental) close(end int) scanState {
	s.stack = s.stack[:len(s.stack)-1]
	if len(s.stack) == 0 {
		s.objEnd = end
		return stDone
	}
	if len(s.stack) == 1 {
		s.inNest = false
	}
	s.valueEnded(end)
	return stAfter
}

// special has the high bit set in each byte of w that is a quote, a
// backslash or below 0x20 (and, after the first such byte, perhaps in
// others: a borrow runs on). The lowest byte marked is always one of
// them: a borrow only leaves a byte that is. Flipping bit 1 takes a
// quote (0x22) to 0x20 and keeps the bytes below 0x20 below it, while
// the bytes from 0x20 to 0x23 other than the quote stay at 0x21 or
// above: one test "below 0x21" finds both the quote and the control
// bytes.
func special(w uint64) uint64 {
	const ones = 0x0101010101010101
	q := w ^ (0x02 * ones)
	bs := w ^ ('\\' * ones)
	return ((q - 0x21*ones) &^ q) | ((bs - ones) &^ bs)
}

// stringRest scans a string from b[i], inside it, as scanString does. It
// returns the index just past the closing quote; or, with more, where to
// resume once more has arrived (never inside an escape); or -1 when the
// string is not valid. escaped says that it met a backslash.
//
// A tool's text that is itself JSON has a backslash every dozen bytes once
// escaped (50 MiB of it, four million escapes), and a call of plainRun and
// of escapeEnd per escape was most of mcpgate's CPU on such a result: the
// loop takes a two-byte escape itself, with one table look-up, and once
// escapes come densely, hands the string to escapedBlocks.
func stringRest(b []byte, i int) (end int, more, escaped bool) {
	const highs = 0x8080808080808080
	plainWords, escapes := 0, 0
	for {
		if i+8 <= len(b) && plainWords < escapedRunWords {
			m := special(binary.LittleEndian.Uint64(b[i:])) & highs
			if m == 0 {
				i += 8
				plainWords++
				continue
			}
			i += bits.TrailingZeros64(m) / 8
			if b[i] == '\\' && i+2 < len(b) && shortEscape[b[i+1]] {
				i += 2
				escaped = true
				plainWords = 0
				if escapes++; escapes == escapedBlocksAfter {
					// Dense escapes: a block at a time, while they last.
					from := i
					i = escapedBlocks(b, i)
					if i == from {
						escapes = -escapedBlocksBackoff
					} else {
						escapes = 0
					}
				}
				continue
			}
		} else {
			plainWords = 0
			if escapes > 0 {
				escapes = 0 // not dense: a run of plain words
			}
			if i = plainRun(b, i); i >= len(b) {
				return i, true, escaped
			}
		}
		switch c := b[i]; {
		case c == '"':
			return i + 1, false, escaped
		case c == '\\':
			escaped = true
			next, cut := escapeEnd(b, i)
			if next < 0 {
				return -1, false, true
			}
			if cut {
				return i, true, true
			}
			i = next
		case c < 0x20:
			return -1, false, escaped
		default:
			i++
		}
	}
}

// escapedBlocksAfter is how many escapes stringRest takes one by one,
// each within a word of the last, before it tries escapedBlocks (slower
// than the word loops where escapes are a line apart, as in logs); after
// a block it could not pass, it takes escapedBlocksBackoff more first.
const escapedBlocksAfter, escapedBlocksBackoff = 8, 32

// escapedRunWords is how many plain words stringRest's own loop tests
// before it leaves the run to plainRun, whose blocks of four words are
// faster on anything longer.
const escapedRunWords = 1

// shortEscape marks the bytes that make a two-byte escape after a
// backslash.
var shortEscape = [256]bool{'"': true, '\\': true, '/': true, 'b': true, 'f': true, 'n': true, 'r': true, 't': true}

// plainRun returns the index of the first byte from b[i] on that is a
// quote, a backslash or below 0x20, or, when fewer than 8 bytes are left
// after the last plain word, of the first of those (the byte loops sort
// them out), or len(b). The first word is tried alone: most strings of a
// list or a request are shorter than one, and stopping on one byte at a
// time through them cost a word's test per byte. Long strings are skipped
// four words at a time.
func plainRun(b []byte, i int) int {
	const highs = 0x8080808080808080
	if i+8 <= len(b) {
		if m := special(binary.LittleEndian.Uint64(b[i:])) & highs; m != 0 {
			return i + bits.TrailingZeros64(m)/8
		}
		i += 8
	}
	for blocks := 0; i+32 <= len(b); i += 32 {
		c := b[i : i+32 : i+32]
		if (special(binary.LittleEndian.Uint64(c))|special(binary.LittleEndian.Uint64(c[8:]))|
			special(binary.LittleEndian.Uint64(c[16:]))|special(binary.LittleEndian.Uint64(c[24:])))&highs != 0 {
			break
		}
		if blocks++; blocks == longRunAfter && len(b)-i >= 32+longRunWindow {
			i = longPlainRun(b, i+32) - 32 // a long run: the rest a window at a time
		}
	}
	for ; i+8 <= len(b); i += 8 {
		if m := special(binary.LittleEndian.Uint64(b[i:])) & highs; m != 0 {
			return i + bits.TrailingZeros64(m)/8
		}
	}
	return i
}
