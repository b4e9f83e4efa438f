package policy

import (
	"errors"
	"sync"
	"unsafe"
)

// The shared decoding of a big result is made by one of the scans while
// the other waits for it: on a 10 MiB result of JSON, logs and prose, about
// 8 ms in which a core is idle before either detector starts. A long
// string with escapes is therefore decoded in two halves at once, the
// second on a goroutine of its own, and the halves joined: one copy of
// the second half within the buffer.

// splitMin is the length from which a string's decoding is split: below
// it, the goroutine and the copy cost more than they save.
const splitMin = 1 << 20

// splitProbe is how far a string is looked at for its end before it is
// split: far enough to tell the short strings, not so far that looking
// costs what the split saves (on text full of escaped quotes, finding the
// end of the first half took a third of the time of decoding it all). A
// string longer than that which still ends before the split point is
// split for nothing: its goroutine decodes from the split point to the
// next quote, megabytes maybe. maxSplitsWasted such splits a message, then
// its strings are decoded whole: hundreds of strings of 64 KiB ahead of a
// long one would otherwise each decode half of it again.
const (
	splitProbe      = 64 << 10
	maxSplitsWasted = 2
)

// errNotTerminated is readString's error for a string with no closing
// quote; the first half of a split string, cut where the second begins,
// ends with it.
var errNotTerminated = errors.New("not terminated")

// splitPoint returns where, in msg[from:to], the decoding of a string may
// be split: a byte after which no escape and no UTF-8 sequence goes on, so
// that decoding the bytes before it and those from it gives what decoding
// them together does; -1 if there is none. The byte before it is ASCII and
// can be no part of an escape but its last (not a backslash, a quote, a
// 'u' or a hex digit: \uXXXX and surrogate pairs end with a hex digit),
// and the byte at it is ASCII, so that it starts no UTF-8 sequence cut in
// two.
func splitPoint(msg []byte, from, to int) int {
	for s := max(from, 1); s < to; s++ {
		if c := msg[s-1]; c < 0x80 && c != '\\' && c != '"' && c != 'u' && hexDigit(c) < 0 && msg[s] < 0x80 {
			return s
		}
	}
	return -1
}

func hexDigit(c byte) int {
	switch {
	case '0' <= c && c <= '9':
		return int(c - '0')
	case 'a' <= c && c <= 'f':
		return int(c-'a') + 10
	case 'A' <= c && c <= 'F':
		return int(c-'A') + 10
	}
	return -1
}

// unescapeSplit is unescape, the string decoded in two halves at once
// when it may be long (the rest of the message is splitMin or more) and
// dst has room for the rest of the message (the shared decoding's buffer
// has).
func (w *stringWalk) unescapeSplit(dst []byte) ([]byte, error) {
	rest := len(w.msg) - (w.open + 1)
	if rest < splitMin || cap(dst)-len(dst) < rest || w.splitsWasted >= maxSplitsWasted {
		return w.unescape(dst)
	}
	mid := w.open + 1 + rest/2
	s := splitPoint(w.msg, mid, min(len(w.msg), mid+4096))
	if s < 0 {
		return w.unescape(dst)
	}
	if probe := min(s, w.end+splitProbe); closingQuote(w.msg[:probe], w.end) < probe {
		// A short string (ahead of megabytes) has no second half: split,
		// its goroutine would decode the rest of the message from s for
		// nothing while this one waits, and the buffer returned would have
		// no room left to split the long string that may follow.
		return w.unescape(dst)
	}
	return w.unescapeAt(dst, s)
}

// unescapeAt is unescape, the bytes from msg[s] on (s a splitPoint inside
// or past the string) decoded on a goroutine of their own, into the room
// that decoding those before it cannot fill: decoded, an escape is shorter
// than itself, and only invalid UTF-8 is longer. Where a half outgrows its
// room, the string is decoded whole; where it ends before s, the first
// half is all of it. dst must have room for the rest of the message.
func (w *stringWalk) unescapeAt(dst []byte, s int) ([]byte, error) {
	from := len(dst)
	room := from + (s - (w.open + 1)) // the first half decodes into dst[from:room] at most
	msg := w.msg                      // not w: the goroutine would move it to the heap
	var second []byte
	var secondEnd int
	var secondErr error
	var wg sync.WaitGroup
	wg.Go(func() {
		secondEnd, second, secondErr = readString(msg, s, dst[room:room:cap(dst)])
	})
	firstEnd, first, firstErr := readString(w.msg[:s], w.open+1, dst[:from:room])
	wg.Wait()
	switch {
	case firstErr == nil: // the string ends before s
		w.end, w.text = firstEnd, view(first[from:])
		w.found()
		w.splitsWasted++
		if unsafe.SliceData(first) == unsafe.SliceData(dst) {
			return dst[:len(first)], nil // with all its room, not the first half's
		}
		return first, nil
	case firstErr != errNotTerminated:
		return nil, w.readError(firstErr)
	case secondErr != nil:
		return nil, w.readError(secondErr)
	case unsafe.SliceData(first) != unsafe.SliceData(dst) ||
		len(second) > 0 && unsafe.SliceData(second) != &dst[:cap(dst)][room]:
		return w.unescape(dst) // a half outgrew its room
	}
	n := copy(dst[len(first):cap(dst)], second)
	dst = dst[:len(first)+n]
	w.end, w.text = secondEnd, view(dst[from:])
	w.found()
	return dst, nil
}
