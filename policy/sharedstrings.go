package policy

import (
	"slices"
	"sync"
	"unsafe"

	"github.com/mcpgate/mcpgate/internal/detect"
)

// A big result is scanned by the secrets and the injection policies side by
// side (concurrent.go). Each found and decoded the message's strings on its
// own: two passes over megabytes of escapes, each into a buffer of the
// result's size that the runtime clears first (about 30% of mcpgate's CPU
// on a 10 MiB result of JSON, logs and prose). They now share one
// decoding: the first to ask makes it, the other waits for it.

// sharedStrings are the string values of one message (member names are not
// read), decoded once for every text scan deciding on it.
type sharedStrings struct {
	msg     []byte
	once    sync.Once
	strings []jsonString
	err     error
	tooMany bool // more strings than maxSharedStrings allows: each scan reads them itself
	// A message's strings found by a prescan (prescan.go) keep the offsets
	// of its line, where msg starts at base; strings[0] is the prescan's
	// strings[first].
	base, first int
	pre         *Prescan
}

// maxSharedStrings bounds the strings recorded for a message of n bytes,
// so that their records take no more than the message (or 32 KiB): a
// peer's result of empty strings (three bytes each, 32 to record) would
// have cost ten times its size. Past it, each scan reads the strings on
// its own, as it did before they were shared, which costs no memory per
// string.
func maxSharedStrings(n int) int { return max(n/int(unsafe.Sizeof(jsonString{})), 1<<10) }

// jsonString is a string value: its quotes at msg[open] and msg[end], its
// text unescaped (a view of msg when it has no escape).
type jsonString struct {
	open, end int
	s         string
}

// of returns the shared strings if they are those of msg (the same bytes,
// not a copy changed by a policy before), or nil.
func (ss *sharedStrings) of(msg []byte) *sharedStrings {
	if ss == nil || len(ss.msg) != len(msg) || unsafe.SliceData(ss.msg) != unsafe.SliceData(msg) {
		return nil
	}
	ss.once.Do(ss.decode)
	if ss.tooMany {
		return nil
	}
	return ss
}

// decode reads the strings as appendJSONStrings does (stringWalk), the
// escaped ones decoded into one buffer that they share.
func (ss *sharedStrings) decode() {
	msg := ss.msg
	var decoded []byte
	it := stringWalk{msg: msg}
	for it.next() {
		if it.escaped() {
			if decoded == nil {
				// Decoded, the strings from here on are no longer than the
				// rest of the message, but for invalid UTF-8 (one byte,
				// three as U+FFFD). Not kept for the next message: between
				// messages it would be memory in use, which the collector
				// lets double.
				decoded = make([]byte, 0, len(msg)-it.open)
			}
			var err error
			// Views of it are kept: appends never touch them, and a copy
			// grown (invalid UTF-8 made longer) leaves them as they are.
			if decoded, err = it.unescapeSplit(decoded); err != nil {
				ss.err = err
				return
			}
		}
		if it.name {
			continue
		}
		if len(ss.strings) >= maxSharedStrings(len(msg)) {
			ss.strings, ss.tooMany = nil, true
			return
		}
		if len(ss.strings) == cap(ss.strings) {
			// Doubled: append grows a long slice by a quarter at a time,
			// which allocated five times its final size in all.
			ss.strings = slices.Grow(ss.strings, max(len(ss.strings), 64))
		}
		ss.strings = append(ss.strings, jsonString{it.open, it.end, it.text})
	}
}

// appendStrings is appendJSONStrings (names false) over the decoded
// strings.
func (ss *sharedStrings) appendStrings(visit func(s string, name bool) bool, write func(dst []byte) []byte) ([]byte, error) {
	if ss.err != nil {
		return nil, ss.err
	}
	var out []byte
	copied := 0
	for _, js := range ss.strings {
		if !visit(js.s, false) {
			continue
		}
		out, copied = ss.replace(out, copied, js, write)
	}
	return ss.rest(out, copied), nil
}

// replace appends to out the message's bytes from copied to js, and js
// as write writes it; it returns out and what is copied then.
func (ss *sharedStrings) replace(out []byte, copied int, js jsonString, write func(dst []byte) []byte) ([]byte, int) {
	msg := ss.msg
	if out == nil {
		out = make([]byte, 0, len(msg)+len(msg)/64+256)
	}
	out = append(out, msg[copied:js.open-ss.base]...)
	return write(out), js.end + 1 - ss.base
}

// rest is the message as replace left it: msg itself if nothing was
// replaced.
func (ss *sharedStrings) rest(out []byte, copied int) []byte {
	if out == nil {
		return ss.msg
	}
	return append(out, ss.msg[copied:]...)
}

// appendFound is appendStrings over the strings a prescan found something
// in (foundBy's hits), visit given each one's findings instead of
// scanning it: the strings with none are those visit would refuse.
func (ss *sharedStrings) appendFound(hits []prescanHit, finds []detect.Finding, visit func(s string, found []detect.Finding) bool, write func(dst []byte) []byte) []byte {
	var out []byte
	copied := 0
	for _, h := range hits {
		js := ss.strings[h.index-ss.first]
		if !visit(js.s, finds[h.lo:h.hi:h.hi]) {
			continue
		}
		out, copied = ss.replace(out, copied, js, write)
	}
	return ss.rest(out, copied)
}
