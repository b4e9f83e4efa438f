package injection

import "unicode/utf8"

// A big tool result is mostly plain ASCII (a log, a CSV export, a base64
// blob): quietPhrases (quiet.go) walks it for words, and scanEncoded for
// tokens. The helpers here walk runs of letters, eight and 32 bytes at a
// time, and remember the longest (letterRun) for the next walk.

// maxTriggerLen bounds the length of a trigger word (newDetector checks).
const maxTriggerLen = 32

// asciiWordBytes are the ASCII bytes that make words in the matching form
// (wordBytes), with the upper-case letters that fold to them.
var asciiWordBytes = func() (t [256]bool) {
	for c := range utf8.RuneSelf {
		t[c] = wordBytes[asciiFold[c]] || wordBytes[c]
	}
	return t
}()

// wordEnd returns the end of the run of asciiWordBytes at text[i:]. Past
// its first bytes it looks at eight at a time while they are all letters:
// a long run (a base64 blob, a hash, one byte repeated) is then cheap.
func wordEnd(text string, i int, runs *letterRun) int {
	for end := min(i+8, len(text)); i < end; i++ {
		if !asciiWordBytes[text[i]] {
			return i
		}
	}
	if i+8 <= len(text) && allLetters(load64(text, i)) {
		i = runs.lettersEnd(text, i)
	}
	for i < len(text) && asciiWordBytes[text[i]] {
		i++
	}
	return i
}

// load64 is text[i:i+8] as a little-endian word.
func load64(text string, i int) uint64 {
	b := text[i : i+8] // one bounds check, and the compiler makes it one load
	return uint64(b[0]) | uint64(b[1])<<8 | uint64(b[2])<<16 | uint64(b[3])<<24 |
		uint64(b[4])<<32 | uint64(b[5])<<40 | uint64(b[6])<<48 | uint64(b[7])<<56
}

// lettersEnd returns the first i' from i on, in steps of eight, where
// text[i':i'+8] is not eight ASCII letters (or fewer than eight bytes are
// left). Past its first 32 bytes, a run of megabytes (a blob, one byte
// repeated) is walked 32 bytes at a time with one branch: the three walks over it (words, tokens,
// base64) were most of the injection detector's time on such a text.
func lettersEnd(text string, i int) int {
	// Most runs are words and tokens, shorter than 32 bytes past their
	// start: eight at a time, as they always were, before the wider loop.
	for range 4 {
		if i+8 > len(text) || !allLetters(load64(text, i)) {
			return i
		}
		i += 8
	}
	for ; i+32 <= len(text); i += 32 {
		b := text[i : i+32]
		x0, x1, x2, x3 := load64(b, 0), load64(b, 8), load64(b, 16), load64(b, 24)
		if (x0|x1|x2|x3)&highs != 0 ||
			letterHighs(x0)&letterHighs(x1)&letterHighs(x2)&letterHighs(x3) != highs {
			break
		}
	}
	for ; i+8 <= len(text) && allLetters(load64(text, i)); i += 8 {
	}
	return i
}

// letterHighs has the high bit of each byte of x set where that byte is
// an ASCII letter, for an x with no byte of 0x80 or more.
func letterHighs(x uint64) uint64 {
	// Setting 0x20 maps 'A'..'Z' onto 'a'..'z' and nothing else onto them.
	y := x | 0x20*ones
	// For bytes below 0x80: the high bit of y+(0x80-'a') is set when y >=
	// 'a', that of y+(0x80-'z'-1) when y > 'z'; no carry crosses a byte.
	ge := y + (0x80-'a')*ones
	gt := y + (0x80-'z'-1)*ones
	return ge &^ gt & highs
}

// letterRun is the longest run of ASCII letters a walk of a text found,
// text[from:to], for the next walk of the same text to jump over: Scan
// walks a blob of megabytes for words (phraseFree), then for tokens and
// base64 runs (scanEncoded); the second walk then costs nothing.
type letterRun struct{ from, to int }

// lettersEnd is lettersEnd(text, i), jumping over what r knows to be
// letters (whole steps of eight, so the steps that follow are the same),
// and remembering the run if it is the longest yet. r may be nil.
// Its callers test the first eight bytes themselves: most words and
// tokens end there, and then cost no call.
func (r *letterRun) lettersEnd(text string, i int) int {
	if r == nil {
		return lettersEnd(text, i)
	}
	from := i
	if r.from <= i && i < r.to || i < r.from && r.from-i <= maxLettersBefore && onlyLetters(text[i:r.from]) {
		i += (r.to - i) &^ 7
	}
	i = lettersEnd(text, i)
	if i-from > r.to-r.from {
		r.from, r.to = from, i
	}
	return i
}

// maxLettersBefore is how far before a known run a walk may start and
// still jump over it: wordEnd records a blob's run from its ninth byte
// (it reads the first ones itself), and scanEncoded then asks from the
// first; without the jump it walked a blob of megabytes a second time.
const maxLettersBefore = 32

// onlyLetters reports whether s is all ASCII letters.
func onlyLetters(s string) bool {
	for i := range len(s) {
		if c := s[i] | 0x20; c < 'a' || c > 'z' {
			return false
		}
	}
	return true
}

// allLetters reports whether the eight bytes of x are all ASCII letters.
func allLetters(x uint64) bool {
	return x&highs == 0 && letterHighs(x) == highs
}
