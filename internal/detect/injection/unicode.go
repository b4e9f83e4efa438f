package injection

import (
	"slices"
	"unicode/utf8"
)

// Hidden characters. The rules are decided per character, from its
// neighbours; what is legitimate is spelled out here and in doc.go:
//
//   - ZWJ (U+200D) between two emoji is an emoji sequence (👨‍👩‍👧, 🏳️‍🌈).
//   - ZWJ and ZWNJ (U+200C) next to a letter of a script that shapes its
//     letters (Arabic, Syriac, N'Ko, Mongolian, the Indic scripts, Sinhala,
//     Myanmar, Khmer) are orthography (Persian "می‌خواهم").
//   - ZWSP (U+200B) next to a letter of a script written without spaces
//     (Thai, Lao, Khmer, Myanmar, Tibetan, CJK, kana) marks a word break.
//   - U+FEFF at the very start of the text is a byte order mark.
//   - One variation selector after a base character picks a glyph (❤️);
//     a supplement selector (U+E0100..) only after a CJK ideograph.
//   - Tag characters are legitimate only inside an emoji subdivision flag:
//     🏴 then 1-7 tag letters or digits then CANCEL TAG (🏴󠁧󠁢󠁳󠁣󠁴󠁿).
//   - Bidi overrides (U+202D, U+202E) are always reported: they reorder
//     what the reader sees (Trojan Source, "annexe.fdp"); embeddings and
//     isolates only when no right-to-left letter is within 64 bytes.
//   - LRM, RLM and ALM, the soft hyphen and private-use characters are never
//     reported (common in ordinary RTL text, scraped pages and terminal icon
//     fonts; they carry no reordering power of their own).
//
// Everything else in the hidden set is reported wherever it occurs.

// classify appends a finding for the character r at text[i:i+size] if it is
// hidden, a tag or a bidi control out of place. It returns the length of a
// legitimate multi-character sequence it consumed (an emoji subdivision
// flag starting at i), or 0.
func (n *normalizer) classify(text string, i int, r rune, size int) int {
	var kind string
	switch {
	case r == 0x1F3F4:
		return flagSequenceLen(text, i, size)
	case 0xE0000 <= r && r <= 0xE007F:
		kind = KindTagSmuggling
	case r == 0x202D || r == 0x202E:
		kind = KindBidiControl
	case 0x202A <= r && r <= 0x202C, 0x2066 <= r && r <= 0x2069:
		if !rtlNear(text, i, size) {
			kind = KindBidiControl
		}
	case r == 0x200D:
		prev, next := neighbours(text, i, size)
		if !(isEmojiPart(prev) && isEmojiPart(next)) && !isJoiningScript(prev) && !isJoiningScript(next) {
			kind = KindHiddenUnicode
		}
	case r == 0x200C:
		prev, next := neighbours(text, i, size)
		if !isJoiningScript(prev) && !isJoiningScript(next) {
			kind = KindHiddenUnicode
		}
	case r == 0x200B:
		prev, next := neighbours(text, i, size)
		if !isSpacelessScript(prev) && !isSpacelessScript(next) {
			kind = KindHiddenUnicode
		}
	case r == 0xFEFF:
		if i != 0 {
			kind = KindHiddenUnicode
		}
	case 0xFE00 <= r && r <= 0xFE0F:
		prev, _ := neighbours(text, i, size)
		if prev < 0 || isVariationSelector(prev) || isInvisible(prev) || prev <= ' ' {
			kind = KindHiddenUnicode
		}
	case 0xE0100 <= r && r <= 0xE01EF:
		prev, _ := neighbours(text, i, size)
		if !isIdeograph(prev) {
			kind = KindHiddenUnicode
		}
	case r == 0x2060, 0x2061 <= r && r <= 0x2064, r == 0x180E, r == 0x115F, r == 0x1160,
		r == 0x3164, r == 0xFFA0, r == 0x17B4, r == 0x17B5, 0x206A <= r && r <= 0x206F,
		0xFFF9 <= r && r <= 0xFFFB, 0x1D173 <= r && r <= 0x1D17A:
		kind = KindHiddenUnicode
	}
	if kind != "" {
		n.addUnicode(kind, i, i+size)
	}
	return 0
}

// maxUnicodeFindings caps the findings of each Unicode kind in one text:
// a result of megabytes of nothing but "\u202e " would otherwise be a
// million findings, held by every list they pass through (once ~1 GB of
// peak memory for 15 MiB). Past the cap, the kind's findings are the first
// maxUnicodeFindings and the last one: the kinds found, so the policy's
// verdict and the kinds its reason names, stay those of the whole list,
// and the findings of other kinds are never covered by a long one.
const maxUnicodeFindings = 256

// unicodeKinds are the kinds addUnicode records, each capped on its own.
var unicodeKinds = [...]string{KindHiddenUnicode, KindTagSmuggling, KindBidiControl}

func unicodeKindIndex(kind string) (int, bool) {
	switch kind {
	case KindHiddenUnicode:
		return 0, true
	case KindTagSmuggling:
		return 1, true
	case KindBidiControl:
		return 2, true
	}
	return 0, false
}

// findingCap is how a normalizer caps its Unicode findings: max of each
// kind (0: no cap), counting those starting in [lo, hi) only. A piece of a
// text is walked in its context, whose findings belong to its neighbours:
// they are kept as they are (the context is bounded), and the piece's own
// findings are capped as the whole text's are, so that the merge can cap
// again (capUnicode) and find what the whole scan finds.
type findingCap struct {
	max, lo, hi int
	// covers (sorted, disjoint) are the phrase matches and encoded
	// findings Scan keeps: past
	// the cap, a finding starting inside one, which Scan drops, does not
	// replace the kind's last (recapUnicode).
	covers []rawFinding
}

// covered reports whether a finding starting at start is inside one of
// c.covers, whose first ones, ending before start, it drops: the findings
// come in the order of their starts.
func (c *findingCap) covered(start int) bool {
	for len(c.covers) > 0 && c.covers[0].End <= start {
		c.covers = c.covers[1:]
	}
	return len(c.covers) > 0 && c.covers[0].Start <= start
}

// unicodeTally is what addUnicode knows of the findings recorded so far.
type unicodeTally struct {
	n    int                    // len(found)
	last int                    // 1 + the index in found of the finding recorded last, 0 for none
	kept [len(unicodeKinds)]int // findings counted, per kind
	// over is, per kind past the cap, the index in found of the one
	// finding standing for all those past it: the latest.
	over [len(unicodeKinds)]int
	// passed is a finding past the cap not recorded, being covered
	// (findingCap.covers): its run's rest is passed over with it.
	passed rawFinding
}

// overCap reports whether some kind had findings dropped by a cap of max.
func (t *unicodeTally) overCap(max int) bool {
	for _, kept := range t.kept {
		if max > 0 && kept > max+1 {
			return true
		}
	}
	return false
}

// resetFound empties n.found, to be capped by c.
func (n *normalizer) resetFound(c findingCap) {
	n.found = n.found[:0]
	n.cap = c
	n.tally = unicodeTally{}
}

// foundMark is a point to come back to in the recording of findings.
type foundMark struct {
	tally unicodeTally
	over  [len(unicodeKinds)]rawFinding
}

func (n *normalizer) markFound() foundMark {
	m := foundMark{tally: n.tally}
	m.tally.n = len(n.found)
	for k, kept := range n.tally.kept {
		if n.cap.max > 0 && kept > n.cap.max {
			m.over[k] = n.found[n.tally.over[k]]
		}
	}
	return m
}

// backToMark forgets the findings recorded since m was made.
func (n *normalizer) backToMark(m foundMark) {
	n.found = n.found[:m.tally.n]
	n.tally = m.tally
	for k, kept := range n.tally.kept {
		if n.cap.max > 0 && kept > n.cap.max {
			n.found[n.tally.over[k]] = m.over[k]
		}
	}
}

// addUnicode records a finding, extending the previous one when the same
// kind continues without a gap: a run of hidden characters is one finding.
// Past the cap, the finding replaces the kind's last one.
func (n *normalizer) addUnicode(kind string, start, end int) {
	t := &n.tally
	if t.last > 0 && n.found[t.last-1].Kind == kind && n.found[t.last-1].End == start {
		n.found[t.last-1].End = end
		return
	}
	if t.passed.Kind == kind && t.passed.End == start {
		t.passed.End = end
		return
	}
	t.passed = rawFinding{}
	if k, ok := unicodeKindIndex(kind); ok && n.cap.max > 0 && n.cap.lo <= start && start < n.cap.hi {
		t.kept[k]++
		switch {
		case t.kept[k] > n.cap.max+1:
			if n.cap.covered(start) {
				// The kind's last stays one Scan keeps, if it has any.
				t.passed = rawFinding{Kind: kind, Start: start, End: end}
				t.last = 0
				return
			}
			n.found[t.over[k]] = rawFinding{Kind: kind, Start: start, End: end}
			t.last = t.over[k] + 1
			return
		case t.kept[k] == n.cap.max+1:
			t.over[k] = len(n.found)
		}
	}
	n.found = append(n.found, rawFinding{Kind: kind, Start: start, End: end})
	t.last = len(n.found)
}

// capUnicode applies the cap of max findings of each Unicode kind to
// found, in place, as addUnicode does: the first max of each kind, and
// the last. The pieces of a text, each capped, are capped again once
// merged: the first max of the whole text are among the first max of its
// pieces, and its last is the last of its last piece.
func capUnicode(found []rawFinding, max int) []rawFinding {
	var kept, over [len(unicodeKinds)]int
	out := found[:0]
	for _, f := range found {
		if k, ok := unicodeKindIndex(f.Kind); ok && max > 0 {
			kept[k]++
			switch {
			case kept[k] > max+1:
				out[over[k]] = f
				continue
			case kept[k] == max+1:
				over[k] = len(out)
			}
		}
		out = append(out, f)
	}
	return out
}

// flagSequenceLen returns the length of the emoji subdivision flag that
// starts with the black flag at text[i:i+size], or 0 if none does.
func flagSequenceLen(text string, i, size int) int {
	j := i + size
	tags := 0
	for j < len(text) {
		r, sz := utf8.DecodeRuneInString(text[j:])
		switch {
		case r == 0xE007F:
			if tags == 0 {
				return 0
			}
			return j + sz - i
		case 0xE0030 <= r && r <= 0xE0039, 0xE0061 <= r && r <= 0xE007A:
			tags++
			if tags > 7 {
				return 0
			}
			j += sz
		default:
			return 0
		}
	}
	return 0
}

// neighbours returns the characters before and after text[i:i+size], -1 at
// either end.
func neighbours(text string, i, size int) (prev, next rune) {
	prev, next = -1, -1
	if i > 0 {
		prev, _ = utf8.DecodeLastRuneInString(text[:i])
	}
	if i+size < len(text) {
		next, _ = utf8.DecodeRuneInString(text[i+size:])
	}
	return prev, next
}

// rtlNear reports whether a right-to-left letter is within 64 bytes of
// text[i:i+size]: embeddings and isolates around such letters are ordinary
// mixed-direction text.
func rtlNear(text string, i, size int) bool {
	lo, hi := max(0, i-64), min(len(text), i+size+64)
	for _, r := range text[lo:hi] {
		if isRTL(r) {
			return true
		}
	}
	return false
}

func isRTL(r rune) bool {
	return 0x590 <= r && r <= 0x8FF || // Hebrew, Arabic, Syriac, Thaana, N'Ko, Samaritan, Mandaic
		0xFB1D <= r && r <= 0xFDFF || 0xFE70 <= r && r <= 0xFEFC ||
		0x10800 <= r && r <= 0x10FFF || 0x1E800 <= r && r <= 0x1EFFF
}

// isJoiningScript reports letters of scripts whose spelling uses ZWJ/ZWNJ.
func isJoiningScript(r rune) bool {
	return 0x600 <= r && r <= 0x8FF || // Arabic, Syriac, Thaana, N'Ko, Arabic supplements
		0x900 <= r && r <= 0xDFF || // Devanagari .. Sinhala
		0x1000 <= r && r <= 0x109F || // Myanmar
		0x1780 <= r && r <= 0x18AF || // Khmer, Mongolian
		0xA8E0 <= r && r <= 0xA8FF || // Devanagari extended
		0xFB50 <= r && r <= 0xFDFF || 0xFE70 <= r && r <= 0xFEFC // Arabic presentation forms
}

// isSpacelessScript reports letters of scripts written without spaces.
func isSpacelessScript(r rune) bool {
	return 0xE00 <= r && r <= 0xFFF || // Thai, Lao, Tibetan
		0x1000 <= r && r <= 0x109F || // Myanmar
		0x1780 <= r && r <= 0x17FF || // Khmer
		0x3000 <= r && r <= 0x9FFF || // CJK punctuation, kana, ideographs
		0xAC00 <= r && r <= 0xD7AF || // Hangul syllables
		0xF900 <= r && r <= 0xFAFF || 0xFF00 <= r && r <= 0xFFEF ||
		0x20000 <= r && r <= 0x3FFFF
}

func isIdeograph(r rune) bool {
	return 0x3400 <= r && r <= 0x9FFF || 0xF900 <= r && r <= 0xFAFF || 0x20000 <= r && r <= 0x3FFFF
}

func isVariationSelector(r rune) bool {
	return 0xFE00 <= r && r <= 0xFE0F || 0xE0100 <= r && r <= 0xE01EF
}

// isEmojiPart approximates Extended_Pictographic plus the characters that
// continue an emoji (skin tones, VS16, tag end): enough to tell an emoji
// ZWJ sequence from a joiner hidden between letters.
func isEmojiPart(r rune) bool {
	return 0x1F000 <= r && r <= 0x1FAFF || 0x2600 <= r && r <= 0x27BF ||
		0x2300 <= r && r <= 0x23FF || 0x2B00 <= r && r <= 0x2BFF ||
		0x2190 <= r && r <= 0x21FF || 0x25A0 <= r && r <= 0x25FF ||
		r == 0xFE0F || r == 0xA9 || r == 0xAE || r == 0x203C || r == 0x2049 ||
		r == 0x2122 || r == 0x2139 || r == 0x3030 || r == 0x303D || r == 0x3297 || r == 0x3299 ||
		r == 0xE007F
}

// recapUnicode records text's Unicode findings again, where the cap
// dropped some and phrase matches were found (s.recapFrom): a finding
// inside a finding Scan keeps is dropped by Scan, so a kind whose first
// max and last were all inside such findings would vanish where one of
// those the cap dropped was not. Past the cap, the last kept is then the
// last outside the findings Scan keeps among the phrase matches and the
// encoded ones (s.out[s.recapFrom:]): a token covering a phrase's start
// makes Scan drop the phrase, and keep the hidden characters inside it.
// A Unicode finding covers no other finding's start, nor does a token
// hold one (its bytes are ASCII), so these are the uncapped scan's
// choice: the encoded findings the cap dropped covered no start. Matches
// are few (judged, within a budget), and this walk is made only with them.
func (d *Detector) recapUnicode(s *scanner, text string) []rawFinding {
	if s.recapFrom == 0 {
		return s.out
	}
	others := slices.Clone(s.out[s.recapFrom:])
	slices.SortFunc(others, scanOrder)
	covers, end := others[:0:0], 0
	for _, m := range others {
		if m.Start >= end {
			covers = append(covers, m)
			end = m.End
		}
	}
	s.n.resetFound(findingCap{max: d.maxUnicode, lo: 0, hi: len(text), covers: covers})
	s.n.normalize(text, false, true)
	s.out = s.out[:0]
	for _, f := range s.n.found {
		if d.enabled.has(f.Kind) {
			s.out = append(s.out, f)
		}
	}
	s.recapFrom = 0
	return append(s.out, others...)
}
