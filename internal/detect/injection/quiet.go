package injection

import (
	"encoding/binary"
	"math/bits"
	"strings"
	"unicode/utf8"
)

// Most text that holds trigger words is still quiet: in 1 MiB of prose,
// code or JSON, thousands of trigger words ("now", "show", "system",
// "instructions") open a rule's window, a few dozen starts pass a rule's
// prefix filter, and no regexp matches. Building the matching form of the
// whole text (a copy of it) and walking it again for words was most of the
// detector's time on such text. quietPhrases shows on the text itself that
// no rule matches, building the matching form only of small windows:
//
//   - plain ASCII maps one to one to its matching form, but for white space
//     (a run is one ' ', or '\n' if it holds a line break): its words are the
//     text's runs of letters, digits and '_', lower-cased;
//   - at a trigger word, the few bytes each rule's guard and prefix filter
//     read are put in the matching form (formAround), and the rules tried
//     exactly as matchPhrases tries them, up to the regexp;
//   - a start a filter admits, and any character outside ASCII (a look-alike
//     letter, an invisible character, a Unicode finding), is settled in a
//     window of the matching form around it (settleWindow), built from a
//     cut before to a cut after: the form of a text is the forms of its
//     pieces between cuts.
//
// Anything that could be a finding (a regexp that matches, "<|") makes it
// give up, and Scan builds the whole matching form as before. The phrase
// rules then find nothing scanPhrases would not: FuzzQuietAsFull compares
// the two on random text, the corpora and planted phrases.

// quietPhrases reports whether no phrase rule matches text. When it does, it
// leaves in s.n.found the Unicode findings of text, as normalize finds
// them. False means it could not tell (or a rule may match).
func (d *Detector) quietPhrases(s *scanner, text string, runs *letterRun) bool {
	return d.quietPhrasesCapped(s, text, runs, findingCap{max: d.maxUnicode, hi: len(text)})
}

// quietPhrasesCapped is quietPhrases with the Unicode findings capped by c.
func (d *Detector) quietPhrasesCapped(s *scanner, text string, runs *letterRun, c findingCap) bool {
	if strings.Contains(text, "<|") {
		return false // a special token, or the start of one: rare
	}
	s.n.resetFound(c)
	// The walk's regexp runs are counted as the full scan counts its own,
	// against a budget the full scan's is never above (formLen, the
	// form's ASCII word bytes, is at most len(text)): past it, the walk
	// gives up at once rather than run more only to give up at its end.
	s.runs, s.runBudget = 0, runBase+len(text)/runEvery
	q := quietWalk{d: d, s: s, text: text}
	for i := 0; i < len(text); {
		if i+64 <= len(text) && text[i] < utf8.RuneSelf {
			// Sixty-four bytes at a time: their word bytes as bits, and the
			// words that end in them (before any byte outside ASCII, and
			// before the last byte, where a word may go on) taken with no
			// branch per byte.
			w, wide := wordBits(text, i)
			ascii := 64
			if wide != 0 {
				ascii = bits.TrailingZeros64(wide)
			}
			ends := w &^ (w >> 1) & (1<<(ascii-1) - 1)
			if ends != 0 {
				if i = q.block(i, w, ends); i < 0 {
					return false
				}
				continue
			}
			if before := w & (1<<ascii - 1); before == 0 {
				if i += ascii; ascii == 64 {
					continue
				}
			} else if first := bits.TrailingZeros64(before); first > 0 {
				i += first
				continue
			}
			// A word of 64 bytes or more at i, or a byte outside ASCII
			// at i or glued to the word there: byte by byte.
		}
		c := text[i]
		if !asciiWordBytes[c] {
			if c >= utf8.RuneSelf {
				if end := q.foldedWord(i); end > i {
					i = end
					continue
				}
				if end := q.dash(i); end > i {
					i = end
					continue
				}
				if i = q.settle(i, i+1); i < 0 {
					return false
				}
				continue
			}
			i++
			continue
		}
		j := wordEnd(text, i+1, runs)
		q.formLen += j - i
		if j < len(text) && text[j] >= utf8.RuneSelf {
			// Glued to what follows ("café", "ig\u200bnore"): its word in the
			// matching form is longer; the window there settles it.
			i = j
			continue
		}
		q.recent[q.words%len(q.recent)] = i
		q.words++
		if e := d.triggerAt(text, i, j); e != nil {
			if i = q.trigger(i, j, e); i < 0 {
				return false
			}
			continue
		}
		i = j
	}
	return s.runs <= runBase+q.formLen/runEvery
}

// block takes the words of text[i:i+64] that end at the bits of ends (w
// has the block's word bytes), and returns where the walk goes on: the
// end of the last, the end of a window that settled a trigger word and
// more, or -1 when a rule may match.
//
// Two passes: the first records every word in recent and marks, with no
// branch, the few whose first two bytes, last two and length a trigger
// word may have (pairLen, lastPair); the second looks only at those, each
// with recent and words as they were at its end.
func (q *quietWalk) block(i int, w, ends uint64) int {
	d, text := q.d, q.text
	block := text[i : i+64]
	starts := w &^ (w << 1)
	base := q.words
	var maybe uint64
	recent, words := &q.recent, q.words // in registers through the loop
	// The block starts at a word start or between words, so the k-th start
	// is that of the word with the k-th end.
	// Unsigned, masked indexes and shifts spare the loop bounds checks,
	// the shifts' range checks and the modulo's sign fix.
	n := uint(words)
	pairLen, lastPair := &d.pairLen, &d.lastPair
	for rest, left := ends, starts; rest != 0; {
		e := uint(bits.TrailingZeros64(rest)) & 63
		rest &= rest - 1
		s := uint(bits.TrailingZeros64(left)) & 63
		left &= left - 1
		recent[n%uint(len(recent))] = i + int(s)
		n++
		// The word is block[s:e+1], and e < 63: the byte after it is in
		// the block, and its length e+1-s below 64. (For a word of one
		// byte, block[e-1] is any byte.)
		maybe |= pairLen[pairIndex(block[s], block[(s+1)&63])] & lastPair[pairIndex(block[(e-1)&63], block[e])] >> ((e + 1 - s) & 63) & 1 << e
	}
	words = int(n)
	q.words = words
	for maybe != 0 {
		e := bits.TrailingZeros64(maybe)
		maybe &= maybe - 1
		upTo := starts & (2<<e - 1)
		ws, we := i+63-bits.LeadingZeros64(upTo), i+e+1
		entry := d.quietIndex.lookup(text, ws, we)
		if entry == nil {
			continue
		}
		words := q.words
		q.words = base + bits.OnesCount64(upTo)
		if next := q.trigger(ws, we, entry); next != we {
			// A window settled it, and more (or a rule may match): the
			// walk goes on at the window's end.
			q.formLen += bits.OnesCount64(w & (2<<e - 1))
			return next
		}
		q.words = words
	}
	last := 63 - bits.LeadingZeros64(ends)
	q.formLen += bits.OnesCount64(w & (2<<last - 1))
	return i + last + 1
}

// quietWalk is the state of quietPhrases' walk over a text.
type quietWalk struct {
	d    *Detector
	s    *scanner
	text string
	// recent holds the starts of the last words, in text; words counts
	// them. After a window (settled), only the words since it (those
	// from settledAt on) are in recent: the matching form has those
	// before too.
	recent           [recentWords]int
	words, settledAt int
	settled          bool
	// formLen is a lower bound of the length of the matching form (each
	// ASCII word byte is one byte of it): a text gets runBase rule runs
	// and one more per runEvery bytes of its form (s.runs counts them).
	formLen int
	lower   [maxTriggerLen]byte
	// probes is quietTrigger's scratch: the probes at the starts it
	// reads, not zeroed at each trigger word.
	probes [maxBack + 1]probe
}

// recentWords is the size of quietWalk.recent: a power of two, above the
// words of a block (32) and the maxBack before them.
const recentWords = 64

// trigger takes the ASCII trigger word text[i:j] (in recent, not glued to
// a character outside ASCII), whose entry is e, and returns where the walk
// goes on: j, the end of a window that settled it, or -1 when a rule may
// match.
func (q *quietWalk) trigger(i, j int, e *triggerEntry) int {
	d := q.d
	known := q.words
	if q.settled {
		known = -(q.words - q.settledAt)
	}
	if d.quietTrigger(q.s, q.text, e, &q.recent, &q.probes, q.words, known, i, j) {
		return j
	}
	return q.settle(i, j)
}

// foldedWord takes, without a window, the word around the character
// outside ASCII at text[x] when every such character in it is a letter the
// matching form folds to ASCII ("répond", "Änderungen"): no Unicode
// finding, one word of the form, which is not a trigger word. It returns
// the word's end, where the walk goes on, or x when it cannot take it.
// The rules tried at later trigger words see the word's characters outside
// ASCII in reach and settle them in a window.
func (q *quietWalk) foldedWord(x int) int {
	text := q.text
	ws := x
	for ws > 0 && asciiWordBytes[text[ws-1]] {
		ws--
	}
	if ws > 0 && text[ws-1] >= utf8.RuneSelf {
		return x
	}
	w := q.lower[:0]
	long := false // longer than any trigger word: w holds only its start
	k := ws
	for k < len(text) {
		c := text[k]
		if c < utf8.RuneSelf {
			if !asciiWordBytes[c] {
				break
			}
			c = asciiFold[c]
			k++
		} else {
			r, size := utf8.DecodeRuneInString(text[k:])
			f := foldRune(r)
			if !wordBytes[f] || f >= utf8.RuneSelf || isInvisible(r) {
				return x // not a letter the form folds to ASCII
			}
			c = f
			k += size
		}
		if len(w) < cap(w) {
			w = append(w, c)
		} else {
			long = true
		}
	}
	if !long && q.d.mayTrigger(w) && q.d.triggers[string(w)] != nil {
		return x
	}
	q.recent[q.words%len(q.recent)] = ws
	q.words++
	for ; x < k; x++ {
		if text[x] < utf8.RuneSelf {
			q.formLen++
		}
	}
	return k
}

// dash takes, without a window, an en or em dash at text[x] that is not
// glued to a word before it ("charge — voir"): its matching form is '-',
// which is no word, and it is no Unicode finding. It returns where the
// walk goes on, or x when it cannot take it. (A word glued before it was
// not recorded in recent: its window takes both. The rules tried at later
// trigger words see the dash in reach and settle it in a window.)
func (q *quietWalk) dash(x int) int {
	text := q.text
	if x > 0 && (asciiWordBytes[text[x-1]] || text[x-1] >= utf8.RuneSelf) {
		return x
	}
	if r, size := utf8.DecodeRuneInString(text[x:]); r == '\u2013' || r == '\u2014' {
		return x + size
	}
	return x
}

// settle settles text[x:y] in a window (settleWindow) and returns its end,
// or -1.
func (q *quietWalk) settle(x, y int) int {
	end, ok := q.d.settleWindow(q.s, q.text, x, y)
	if !ok {
		return -1
	}
	q.settled, q.settledAt = true, q.words
	return end
}

// wordBits returns a bit for each byte of text[i:i+64] that is an ASCII
// word byte (asciiWordBytes), and one for each byte of 0x80 or more.
// Unrolled: eight loads at constant offsets, with no bounds checks, and
// eight independent chains.
func wordBits(text string, i int) (words, wide uint64) {
	b := text[i : i+64]
	x0, x1, x2, x3 := load64(b, 0), load64(b, 8), load64(b, 16), load64(b, 24)
	x4, x5, x6, x7 := load64(b, 32), load64(b, 40), load64(b, 48), load64(b, 56)
	if (x0|x1|x2|x3|x4|x5|x6|x7)&highs == 0 {
		// The common case, all ASCII: no byte to mask.
		return gatherHighs(wordHighs(x0)) | gatherHighs(wordHighs(x1))<<8 | gatherHighs(wordHighs(x2))<<16 | gatherHighs(wordHighs(x3))<<24 |
			gatherHighs(wordHighs(x4))<<32 | gatherHighs(wordHighs(x5))<<40 | gatherHighs(wordHighs(x6))<<48 | gatherHighs(wordHighs(x7))<<56, 0
	}
	words = wordByteBits(x0) | wordByteBits(x1)<<8 | wordByteBits(x2)<<16 | wordByteBits(x3)<<24 |
		wordByteBits(x4)<<32 | wordByteBits(x5)<<40 | wordByteBits(x6)<<48 | wordByteBits(x7)<<56
	wide = highBits(x0) | highBits(x1)<<8 | highBits(x2)<<16 | highBits(x3)<<24 |
		highBits(x4)<<32 | highBits(x5)<<40 | highBits(x6)<<48 | highBits(x7)<<56
	return words, wide
}

// wordByteBits has bit k set where byte k of x is an ASCII word byte.
func wordByteBits(x uint64) uint64 {
	return highBits(wordHighs(x&^highs) &^ x)
}

// highBits gathers the high bit of each byte of x into bit k for byte k.
func highBits(x uint64) uint64 {
	return gatherHighs(x & highs)
}

// gatherHighs is highBits of an x with no bit set but the high bits.
func gatherHighs(x uint64) uint64 {
	return (x >> 7) * 0x0102040810204080 >> 56
}

// wordHighs has the high bit of each byte of x set where that byte is an
// ASCII letter, digit or '_', for an x with no byte of 0x80 or more.
func wordHighs(x uint64) uint64 {
	y := x | 0x20*ones // upper case onto lower case, and nothing else onto letters
	letter := (y + (0x80-'a')*ones) &^ (y + (0x80-'z'-1)*ones)
	digit := (x + (0x80-'0')*ones) &^ (x + (0x80-'9'-1)*ones)
	under := ^((x ^ '_'*ones) + 0x7f*ones)
	return (letter | digit | under) & highs
}

// pairIndex folds the first two bytes of a word into pairLen's index. The
// low five bits of a letter are the same in either case; a digit or '_'
// shares them with a letter, which only lets a few more words through to
// the trigger index.
func pairIndex(c0, c1 byte) int { return int(c0&31)<<5 | int(c1&31) }

// triggerAt returns the entry of the ASCII word text[i:j] lower-cased,
// nil when it is no trigger word; a look at its first, second and last
// bytes and its length passes over most words.
func (d *Detector) triggerAt(text string, i, j int) *triggerEntry {
	n := j - i
	if n >= 64 || (d.pairLen[pairIndex(text[i], text[i+min(1, n-1)])]&d.lastLen[text[j-1]])>>n&1 == 0 {
		return nil
	}
	return d.quietIndex.lookup(text, i, j)
}

// Around a trigger word, formAround puts in the matching form what the
// guards and the prefix filters read: guardBefore bytes before the first
// start tried, the words up to the trigger, guardAfter bytes after it.
const (
	guardBefore = 16 // afterAngle looks 16 bytes back, the punctuation of a start 8
	guardAfter  = 24 // beforeColon looks 24 bytes on; a filter 15 bytes from a start
	maxAround   = 512
)

// quietTrigger reports whether, at the ASCII trigger word text[i:j], no
// rule of rules gets past its guard and prefix filter at any start
// matchPhrases would try. recent holds the starts of the last words in
// text, the trigger's last, words of them in all; known is how many
// words the matching form has up to it, or minus the number of the last of
// them in recent (the form has more: words before a window are not in
// recent). False means it could not tell, or a start is admitted: its
// window must settle it.
func (d *Detector) quietTrigger(s *scanner, text string, e *triggerEntry, recent *[recentWords]int, probes *[maxBack + 1]probe, words, known, i, j int) bool {
	back := e.back
	if known < 0 {
		if back > -known-1 {
			return false // a start before the window
		}
		known = back + 1
	}
	back = min(back, known-1)
	var at [maxBack + 1]int // the starts, earliest first
	starts := at[:back+1]
	for k := range starts {
		starts[k] = recent[uint(words-1-back+k)%uint(len(recent))]
	}
	if s.around == nil {
		s.around = make([]byte, 0, maxAround+8)
	}
	// Each rule is settled on the text itself where it can be: its guard
	// on the form around the trigger word only, its filter's pairs on the
	// first two bytes at each start, then the rest of its filter on the
	// form of the few bytes there. Rules that start at punctuation need
	// the form around all the starts.
	var guardForm []byte
	gi := i
	probed, full := 0, false // probes[k] is read when probed has the bit k
	// When the merged filter of the rules that start at a word rejects
	// every start, none of them is looked at (nor its guard); when it
	// rejects some, they look at the others only. It is asked at the
	// first of them whose guard, if any, does not say no on a form made
	// already.
	wordStarts, merged := -1, false
	for _, r := range e.active {
		if !r.punct {
			if r.guard != nil && guardForm != nil && !r.guard(guardForm, gi, gi+j-i) {
				continue
			}
			if !merged {
				merged = true
				if u := e.union(); u != nil {
					if admitted, ok := u.admitted(text, starts, probes, &probed); ok {
						wordStarts = admitted
					}
				}
			}
			if wordStarts == 0 {
				break // the rules after it start at a word too
			}
		}
		if r.guard != nil {
			if guardForm == nil {
				at := [1]int{i}
				b, ok := formAround(text, at[:], j, s.around[:0])
				if !ok {
					return false
				}
				guardForm, gi = b, at[0]
			}
			if !r.guard(guardForm, gi, gi+j-i) {
				continue
			}
		}
		// The filter is built past the guard only, as matchPhrases builds
		// it: most rules are never tried on most texts.
		f := r.filter()
		if f == nil {
			return false // every start is admitted
		}
		if f.pairs == nil || r.punct && punctInReach(text, starts[back-min(r.backWords(), known-1):]) {
			full = true
			continue
		}
		// A rule that may start at punctuation before a word, where there
		// is none, starts at the word: as the others.
		for k := back - min(r.backWords(), known-1); k <= back; k++ {
			ws := starts[k]
			if !r.punct && wordStarts&(1<<k) == 0 || !mayPair(f, text, ws) {
				continue
			}
			if probed&(1<<k) == 0 {
				if !probeInto(&probes[k], text, ws) {
					return false
				}
				probed |= 1 << k
			}
			if f.mayAdmit(&probes[k]) {
				return false
			}
		}
	}
	if !full {
		return true
	}
	b, ok := formAround(text, starts, j, s.around[:0])
	if !ok {
		return false
	}
	ti, tj := starts[back], starts[back]+j-i
	for _, r := range e.active {
		if r.guard != nil && !r.guard(b, ti, tj) {
			continue
		}
		f := r.filter()
		if !r.punct && f.pairs != nil {
			continue // settled above
		}
		for _, ws := range starts[back-min(r.backWords(), known-1):] {
			if r.punct {
				for p := max(0, ws-8); p < ws; p++ {
					if b[p] != ' ' && b[p] != '\n' && !isWordByte(b[p]) && f.admits(b[p:]) {
						return false
					}
				}
			}
			if f.admits(b[ws:]) {
				return false
			}
		}
	}
	return true
}

// punctInReach reports whether, in the eight bytes of the matching form
// before one of the ASCII word starts (where a rule that starts at
// punctuation is tried), a byte may be punctuation: neither white space
// nor a word byte (a character outside ASCII may be either).
func punctInReach(text string, starts []int) bool {
	for _, ws := range starts {
		n := 0 // bytes of the form
		for k := ws - 1; k >= 0 && n < 8; n++ {
			c := text[k]
			if !isASCIISpace(c) {
				if !asciiWordBytes[c] {
					return true
				}
				k--
				continue
			}
			for k >= 0 && isASCIISpace(text[k]) {
				k--
			}
		}
	}
	return false
}

// probeInto sets *p to probeText(text, ws), and reports its ok: in
// place, as quietTrigger keeps them.
func probeInto(p *probe, text string, ws int) bool {
	if ws+16 <= len(text) {
		if lo, ok := plainChunk(text, ws, false); ok {
			if hi, ok := plainChunk(text, ws+8, lo>>56 == ' '); ok {
				p.w[0], p.w[1], p.n = lo, hi&^(0xFF<<56), maxLongPrefixLen
				return true
			}
		}
	}
	var ok bool
	*p, ok = probeText(text, ws)
	return ok
}

// probeText is the probe of the matching form at the ASCII word start
// text[ws]; false when a character outside ASCII is in reach.
func probeText(text string, ws int) (probe, bool) {
	if ws+16 <= len(text) {
		// Printable ASCII with single spaces is its own form, lower-cased:
		// the fifteen bytes in two loads (the sixteenth only read).
		if lo, ok := plainChunk(text, ws, false); ok {
			if hi, ok := plainChunk(text, ws+8, lo>>56 == ' '); ok {
				return probe{[2]uint64{lo, hi &^ (0xFF << 56)}, maxLongPrefixLen}, true
			}
		}
	}
	var buf [16]byte
	n := 0
	for k := ws; k < len(text) && n < maxLongPrefixLen; n++ {
		c := text[k]
		switch f := asciiFold[c]; {
		case f != 0:
			buf[n] = f
			k++
		case c >= utf8.RuneSelf:
			return probe{}, false
		case isASCIISpace(c):
			for k < len(text) && isASCIISpace(text[k]) {
				k++
			}
			buf[n] = ' ' // '\n' too: the sets read it as ' '
		default:
			buf[n] = c // control characters are their own form
			k++
		}
	}
	return probe{[2]uint64{binary.LittleEndian.Uint64(buf[:8]), binary.LittleEndian.Uint64(buf[8:])}, n}, true
}

// mayPair reports whether the first two bytes of the matching form at the
// word start text[ws] may be a pair of f (whose pairs are set); true
// when it cannot tell.
func mayPair(f *prefixFilter, text string, ws int) bool {
	if text[ws] >= utf8.RuneSelf {
		return true // a word that starts with a folded letter (foldedWord)
	}
	if ws+1 >= len(text) {
		return false // one byte: admits wants two
	}
	c1 := text[ws+1]
	switch {
	case asciiFold[c1] != 0:
		c1 = asciiFold[c1]
	case isASCIISpace(c1):
		c1 = ' ' // a run of white space, and pairHash reads '\n' as ' '
	case c1 >= utf8.RuneSelf:
		return true
	}
	h := pairHash(asciiFold[text[ws]], c1)
	return f.pairs[h/64]&(1<<(h%64)) != 0
}

// backWords is how many words before its trigger a match of r may start.
func (r *rule) backWords() int {
	if r.back == 0 {
		return defaultBack
	}
	return r.back
}

// formAround appends to dst the matching form of text around the ASCII
// words at starts (ascending, the last the trigger word, which ends at
// j): guardBefore bytes before the first, all up to j, guardAfter bytes
// after (fewer at either end of the text). It replaces each start by its
// offset in the form. False when a character outside ASCII is in reach,
// or the form would be longer than maxAround.
func formAround(text string, starts []int, j int, dst []byte) ([]byte, bool) {
	first := starts[0]
	if first >= guardBefore && text[first-guardBefore] != ' ' {
		// Sixteen bytes of printable ASCII with single spaces before the
		// first start (no run of white space reaching in) are their own
		// form, lower-cased.
		if lo, ok := plainChunk(text, first-guardBefore, false); ok {
			if hi, ok := plainChunk(text, first-guardBefore+8, lo>>56 == ' '); ok {
				dst = binary.LittleEndian.AppendUint64(dst, lo)
				dst = binary.LittleEndian.AppendUint64(dst, hi)
				return formAfter(text, starts, j, dst)
			}
		}
	}
	// Back from the first start: white space is one byte (none at the
	// start of the text).
	var before [guardBefore]byte
	n := 0
	for k := first - 1; k >= 0 && n < len(before); {
		c := text[k]
		if c >= utf8.RuneSelf {
			return nil, false
		}
		if !isASCIISpace(c) {
			if 'A' <= c && c <= 'Z' {
				c += 'a' - 'A'
			}
			n++
			before[len(before)-n] = c
			k--
			continue
		}
		sp := byte(' ')
		for ; k >= 0 && isASCIISpace(text[k]); k-- {
			if text[k] == '\n' {
				sp = '\n'
			}
		}
		if k < 0 {
			break // leading white space has no form
		}
		n++
		before[len(before)-n] = sp
	}
	dst = append(dst, before[len(before)-n:]...)
	return formAfter(text, starts, j, dst)
}

// formAfter is formAround from its first start on, dst holding the form
// before it.
func formAfter(text string, starts []int, j int, dst []byte) ([]byte, bool) {
	first := starts[0]
	next, limit := 0, -1
	space := false // the last byte written is white space
	for k := first; k < len(text); {
		if k+8 <= len(text) && len(dst)+8 <= maxAround {
			// Eight bytes of printable ASCII with single spaces are their
			// own form, lower-cased (as in normalize).
			if lower, ok := plainChunk(text, k, space); ok {
				for next < len(starts) && starts[next] < k+8 {
					starts[next] = len(dst) + starts[next] - k
					next++
				}
				if limit < 0 && j < k+8 {
					limit = len(dst) + j - k + guardAfter
				}
				dst = binary.LittleEndian.AppendUint64(dst, lower)
				space = lower>>56 == ' '
				k += 8
				if limit >= 0 && len(dst) >= limit {
					break
				}
				continue
			}
		}
		if next < len(starts) && k == starts[next] {
			starts[next] = len(dst)
			next++
		}
		if k == j {
			limit = len(dst) + guardAfter
		}
		if limit >= 0 && len(dst) >= limit {
			break
		}
		if len(dst) == maxAround {
			return nil, false
		}
		c := text[k]
		if c >= utf8.RuneSelf {
			return nil, false
		}
		if !isASCIISpace(c) {
			if 'A' <= c && c <= 'Z' {
				c += 'a' - 'A'
			}
			dst = append(dst, c)
			space = false
			k++
			continue
		}
		sp := byte(' ')
		for ; k < len(text) && isASCIISpace(text[k]); k++ {
			if text[k] == '\n' {
				sp = '\n'
			}
		}
		switch {
		case !space:
			dst = append(dst, sp)
		case sp == '\n':
			dst[len(dst)-1] = sp // the run began in the last eight bytes
		}
		space = true
	}
	return dst, true
}

func isASCIISpace(c byte) bool {
	return c == ' ' || c == '\n' || c == '\t' || c == '\r' || c == '\v' || c == '\f'
}

// isCut reports whether text may be cut before text[c]: white space ends
// there and an ASCII character that is not white space follows. The
// normaliser's only state, whether white space was just written, is then
// known, and the matching form of text is that of text[:c] followed by
// that of text[c:].
func isCut(text string, c int) bool {
	return c == 0 || c == len(text) ||
		isASCIISpace(text[c-1]) && text[c] < utf8.RuneSelf && !isASCIISpace(text[c])
}

// maxWindow bounds a window's text: past it (a text without white space),
// quietPhrases gives up.
const maxWindow = 64 << 10

// cutBefore returns the last cut at or before c, or -1 past maxWindow bytes.
func cutBefore(text string, c int) int {
	for stop := c - maxWindow; c > 0 && !isCut(text, c); c-- {
		if c < stop {
			return -1
		}
	}
	return max(c, 0)
}

// cutAfter returns the first cut at or after c, or -1 past maxWindow bytes.
func cutAfter(text string, c int) int {
	for stop := c + maxWindow; c < len(text) && !isCut(text, c); c++ {
		if c > stop {
			return -1
		}
	}
	return min(c, len(text))
}

// settleWindow settles text[x:y] (a trigger word, or a character outside
// ASCII) on the matching form: the piece between the cuts around it (with
// any other character outside ASCII near its end) is the core; its words are
// tried as matchPhrases tries them, in a window reaching far enough before
// and after it, and its Unicode findings are appended to s.n.found. It
// returns the end of the core, where the walk goes on; false when a rule
// may match there, or the window cannot be made.
func (d *Detector) settleWindow(s *scanner, text string, x, y int) (int, bool) {
	coreLo, coreHi := cutBefore(text, x), cutAfter(text, y)
	alone := x == coreLo && x > 0 && asciiWordBytes[text[x]] && coreHi >= 0 && noWordIn(text, y, coreHi)
	if asciiWordBytes[text[x]] && coreHi >= 0 {
		// The words just past a trigger word join its core: another
		// trigger word there ("system prompt") would find its starts
		// before this window's end, and need a window of its own.
		if c := cutWithin(text, coreHi+coreReach, coreReach); c >= 0 {
			coreHi = c
		}
	}
	for coreHi >= 0 && coreHi < len(text) {
		// A character outside ASCII just past the core joins it: one
		// window for a word with several accents, or a sentence in Greek.
		k, end := coreHi, min(len(text), coreHi+64)
		for k+8 <= end && load64(text, k)&highs == 0 {
			k += 8
		}
		for k < end && text[k] < utf8.RuneSelf {
			k++
		}
		if k == end {
			break
		}
		coreHi = cutAfter(text, k+1)
	}
	if coreLo < 0 || coreHi < 0 || coreHi-coreLo > maxWindow {
		return 0, false
	}
	mark, runs := s.n.markFound(), s.runs
	// Most cores need nothing around them: a word with an accent is no
	// trigger word. A window too short says so, and a longer one is made.
	// The second reaches far enough for every window of the corpora: nine
	// words before, a rule's longest match after. (The runs of a window
	// too short are made again in the next: counted once, as the full
	// scan counts them.)
	margins := [...]struct{ before, after int }{{0, 0}, {96, 232}, {256, 512}, {1024, 2048}, {4096, 8192}}
	tried := margins[:]
	if alone {
		// A trigger word alone in its core, not at the start of the text:
		// the core alone is too short for its rules, and says so at the
		// word, before any run.
		tried = margins[1:]
	}
	for _, margin := range tried {
		lo, hi := cutBefore(text, max(0, coreLo-margin.before)), cutAfter(text, min(len(text), coreHi+margin.after))
		if lo < 0 || hi < 0 {
			return 0, false
		}
		s.n.backToMark(mark)
		s.runs = runs
		s.n.b = s.n.b[:0]
		s.n.appendForm(text, lo, coreLo, false, false)
		cl := len(s.n.b)
		s.n.appendForm(text, coreLo, coreHi, false, true)
		ch := len(s.n.b)
		s.n.appendForm(text, coreHi, hi, false, false)
		switch d.quietWindow(s, cl, ch, lo > 0, hi < len(text)) {
		case windowQuiet:
			return coreHi, true
		case windowMatch:
			return 0, false
		}
	}
	return 0, false
}

// coreReach is how far past a trigger word's core settleWindow's core
// reaches, to the first cut from there.
const coreReach = 32

// cutWithin returns the first cut of text[c:c+n], or -1 when there is none
// (or c is past the text's end).
func cutWithin(text string, c, n int) int {
	for end := min(len(text), c+n); c < end; c++ {
		if isCut(text, c) {
			return c
		}
	}
	if c == len(text) {
		return c
	}
	return -1
}

// noWordIn reports whether text[i:j] holds no ASCII word byte and no byte
// of 0x80 or more: no word of the matching form starts there.
func noWordIn(text string, i, j int) bool {
	for _, c := range []byte(text[i:j]) {
		if asciiWordBytes[c] || c >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

type windowVerdict int

const (
	windowQuiet windowVerdict = iota
	windowMatch               // a rule may match, or "<|"
	windowShort               // the window does not reach far enough
)

// quietWindow tries the rules at the trigger words of b[cl:ch] as
// matchPhrases does, b (s.n.b) being a window of a text's matching form,
// cut before (cutLo) or at its start, and cut after (cutHi) or at its end.
func (d *Detector) quietWindow(s *scanner, cl, ch int, cutLo, cutHi bool) windowVerdict {
	b := s.n.b
	var recent [maxBack + 1]int
	words := 0
	for i := 0; i < len(b) && i < ch; {
		if !isWordByte(b[i]) {
			if b[i] == '<' && i >= cl && i+1 < len(b) && b[i+1] == '|' {
				return windowMatch
			}
			i++
			continue
		}
		j := i + 1
		for j < len(b) && isWordByte(b[j]) {
			j++
		}
		recent[words%len(recent)] = i
		words++
		if i < cl || !d.mayTrigger(b[i:j]) {
			i = j
			continue
		}
		for _, ri := range d.triggers[string(b[i:j])] {
			r := d.rules[ri]
			if !d.enabled.has(r.kind) {
				continue
			}
			back := min(r.backWords(), words-1)
			if cutLo && (words-1 <= maxBack || recent[(words-1-back)%len(recent)] < guardBefore) ||
				cutHi && j+guardAfter > len(b) {
				return windowShort
			}
			if r.guard != nil && !r.guard(b, i, j) {
				continue
			}
			for k := back; k >= 0; k-- {
				ws := recent[(words-1-k)%len(recent)]
				if r.punct {
					for p := max(0, ws-8); p < ws; p++ {
						if b[p] != ' ' && b[p] != '\n' && !isWordByte(b[p]) {
							if v := d.quietAt(s, r, b, p, cutHi); v != windowQuiet {
								return v
							}
						}
					}
				}
				if v := d.quietAt(s, r, b, ws, cutHi); v != windowQuiet {
					return v
				}
			}
		}
		i = j
	}
	return windowQuiet
}

// quietAt is tryAt of rule r at b[p:] in a window: windowMatch when its
// regexp matches, or when the text has had its share of runs
// (s.runBudget; the full scan then reports the rest as a phrase_flood).
func (d *Detector) quietAt(s *scanner, r *rule, b []byte, p int, cutHi bool) windowVerdict {
	maxLen := r.maxLen
	if maxLen == 0 {
		maxLen = defaultMaxLen
	}
	end := min(len(b), p+maxLen)
	for end < len(b) && isWordByte(b[end]) {
		end++
	}
	if cutHi && p+maxLongPrefixLen > len(b) {
		return windowShort
	}
	if !r.filter().admits(b[p:]) {
		return windowQuiet
	}
	if cutHi && end == len(b) {
		return windowShort
	}
	if s.runs == s.runBudget {
		return windowMatch // giving up is safe: the full scan decides
	}
	s.runs++
	if end-p < r.minMatch {
		return windowQuiet
	}
	if r.re.FindIndex(b[p:end]) != nil {
		return windowMatch
	}
	return windowQuiet
}
