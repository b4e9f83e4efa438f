package injection

import (
	"math/bits"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

// The quiet walk as it was before its trigger words were looked up in a
// table and their rules' starts settled once for all of them: the
// reference the walk is checked against (sameQuietWalk, in FuzzQuietAsFull).
// It shares the walk's unchanged parts (probeText, quietWindow, and
// formAround, whose output FuzzQuietParts pins to the matching form).

func (d *Detector) refQuietPhrasesCapped(s *scanner, text string, runs *letterRun, c findingCap) bool {
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
				if i = q.refBlock(i, w, ends); i < 0 {
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
				if i = q.refSettle(i, i+1); i < 0 {
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
		if d.refMayTriggerText(text, i, j) {
			if i = q.refTrigger(i, j); i < 0 {
				return false
			}
			continue
		}
		i = j
	}
	return s.runs <= runBase+q.formLen/runEvery
}

func (q *quietWalk) refBlock(i int, w, ends uint64) int {
	d, text := q.d, q.text
	block := text[i : i+64]
	starts := w &^ (w << 1)
	base := q.words
	var maybe uint64
	recent, words := &q.recent, q.words // in registers through the loop
	for rest, left := ends, starts; rest != 0; {
		e := bits.TrailingZeros64(rest)
		rest &= rest - 1
		upTo := left & (2<<e - 1)
		left &^= upTo
		s := 63 - bits.LeadingZeros64(upTo)
		recent[words%len(recent)] = i + s
		words++
		// The word is block[s:e+1], and e < 63: the byte after it is in
		// the block (the masks spare the bounds checks).
		maybe |= d.pairLen[pairIndex(block[s&63], block[(s+1)&63])] & d.lastLen[block[e&63]] >> (e + 1 - s) & 1 << e
	}
	q.words = words
	for maybe != 0 {
		e := bits.TrailingZeros64(maybe)
		maybe &= maybe - 1
		upTo := starts & (2<<e - 1)
		ws, we := i+63-bits.LeadingZeros64(upTo), i+e+1
		if !d.refMayTriggerText(text, ws, we) {
			continue
		}
		words := q.words
		q.words = base + bits.OnesCount64(upTo)
		if next := q.refTrigger(ws, we); next != we {
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

func (q *quietWalk) refTrigger(i, j int) int {
	w := q.lower[:j-i]
	for k := range w {
		w[k] = asciiFold[q.text[i+k]]
	}
	d := q.d
	e := d.quietTriggers[string(w)]
	if e == nil {
		return j
	}
	known := q.words
	if q.settled {
		known = -(q.words - q.settledAt)
	}
	if d.refQuietTrigger(q.s, q.text, e, &q.recent, q.words, known, i, j) {
		return j
	}
	return q.refSettle(i, j)
}

func (d *Detector) refQuietTrigger(s *scanner, text string, e *triggerEntry, recent *[recentWords]int, words, known, i, j int) bool {
	rules := e.rules
	back := 0
	for _, ri := range rules {
		back = max(back, d.rules[ri].backWords())
	}
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
		starts[k] = recent[(words-1-back+k)%len(recent)]
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
	var probes [maxBack + 1]probe
	probed, full := 0, false
	// When the merged filter of the rules that start at a word rejects
	// every start, none of them is looked at (nor its guard).
	u := e.union()
	wordRulesRejected := u != nil && u.refRejects(text, starts, &probes, &probed)
	for _, ri := range rules {
		r := d.rules[ri]
		if !d.enabled.has(r.kind) || wordRulesRejected && !r.punct {
			continue
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
			if !mayPair(f, text, ws) {
				continue
			}
			if probed&(1<<k) == 0 {
				p, ok := probeText(text, ws)
				if !ok {
					return false
				}
				probes[k] = p
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
	for _, ri := range rules {
		r := d.rules[ri]
		if !d.enabled.has(r.kind) {
			continue
		}
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

func (u *startUnion) refRejects(text string, starts []int, probes *[maxBack + 1]probe, probed *int) bool {
	for k, ws := range starts {
		if !mayPair(&prefixFilter{pairs: &u.pairs}, text, ws) {
			continue
		}
		if *probed&(1<<k) == 0 {
			p, ok := probeText(text, ws)
			if !ok {
				return false
			}
			probes[k] = p
			*probed |= 1 << k
		}
		if p := &probes[k]; p.n >= 2 && u.mayPair(p) && u.heads.mayHave(p) {
			return false
		}
	}
	return true
}

// refMayTriggerText is mayTrigger of the word text[i:j] lower-cased, after
// a look at its first, second and last bytes and its length.
func (d *Detector) refMayTriggerText(text string, i, j int) bool {
	n := j - i
	if n >= 64 || (d.pairLen[pairIndex(text[i], text[i+min(1, n-1)])]&d.lastLen[text[j-1]])>>n&1 == 0 {
		return false
	}
	h := uint(n)*0x9E3779B1 ^ uint(asciiFold[text[i]])<<16 ^ uint(asciiFold[text[j-1]])<<8 ^ uint(asciiFold[text[i+n/2]])*0x85EB
	h = (h ^ h>>13) & (triggerHintBits - 1)
	return d.triggerHint[h/64]&(1<<(h%64)) != 0
}

// refSettle is settle as it was, with refSettleWindow.
func (q *quietWalk) refSettle(x, y int) int {
	end, ok := q.d.refSettleWindow(q.s, q.text, x, y)
	if !ok {
		return -1
	}
	q.settled, q.settledAt = true, q.words
	return end
}

// refSettleWindow is settleWindow as it was: it tried the core alone first
// for a trigger word too.
func (d *Detector) refSettleWindow(s *scanner, text string, x, y int) (int, bool) {
	coreLo, coreHi := cutBefore(text, x), cutAfter(text, y)
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
	mark := s.n.markFound()
	// Most cores need nothing around them: a word with an accent is no
	// trigger word. A window too short says so, and a longer one is made.
	for _, margin := range [...]struct{ before, after int }{{0, 0}, {256, 512}, {1024, 2048}, {4096, 8192}} {
		lo, hi := cutBefore(text, max(0, coreLo-margin.before)), cutAfter(text, min(len(text), coreHi+margin.after))
		if lo < 0 || hi < 0 {
			return 0, false
		}
		s.n.backToMark(mark)
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

// sameQuietWalk checks that the walk tells what the reference walk tells on
// text, with each detector of ds: it gives up where that gives up, and
// otherwise finds the same Unicode findings and runs as many regexps.
func sameQuietWalk(t *testing.T, ds []*Detector, text string) {
	t.Helper()
	for k, d := range ds {
		var a, b scanner
		var runsA, runsB letterRun
		c := findingCap{max: d.maxUnicode, hi: len(text)}
		got, want := d.quietPhrasesCapped(&a, text, &runsA, c), d.refQuietPhrasesCapped(&b, text, &runsB, c)
		if got != want || got && (!slices.Equal(a.n.found, b.n.found) || a.runs != b.runs) {
			t.Fatalf("detector %d: %d bytes %q:\nwalk %v %v (%d runs)\nreference %v %v (%d runs)", k, len(text), clip(text), got, a.n.found, a.runs, want, b.n.found, b.runs)
		}
	}
}
