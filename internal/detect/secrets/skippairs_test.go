package secrets

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// BenchmarkSkipPairs: the prefilter's skip over plain ASCII without
// keywords, and the skip before it (threesSkip).
func BenchmarkSkipPairs(b *testing.B) {
	for _, tc := range []struct{ name, text string }{
		{"x", strings.Repeat("x", 1<<20)},
		{"prose", strings.Repeat("The quick brown fox jumps over the lazy dog; logs, numbers 0123456789. ", 1<<20/72)},
	} {
		b.Run(tc.name, func(b *testing.B) {
			pre := Default().pre
			b.SetBytes(int64(len(tc.text)))
			for b.Loop() {
				pre.skipQuads(tc.text, 0)
			}
		})
		b.Run("threes/"+tc.name, func(b *testing.B) {
			old := defaultThreesSkip()
			b.SetBytes(int64(len(tc.text)))
			for b.Loop() {
				old.skip(tc.text, 0)
			}
		})
	}
}

// FuzzSkipPairs: scan, skipping with skipQuads (windows of four bytes,
// eight bytes at a time), finds the keyword occurrences the automaton finds run
// over every byte, in the same order; and skipQuads never passes the start
// of an occurrence.
func FuzzSkipPairs(f *testing.F) {
	f.Add("plain text with a key AKIA and ghp_ in it", 0)
	f.Add(strings.Repeat("x", 100)+"sk-", 3)
	// Two-byte keywords at odd distances, and at the very end.
	f.Add("xxxxxxxxxSKxxxxxxxxxxx", 0)
	f.Add("xxxxxxxxxxxxxxxxxxxxYC", 1)
	f.Add("xxxxxxxxxxxxxxxxxxxxxQ~", 0)
	f.Add("xxxxxxxGHP_xxxxxxxxxx", 0)
	f.Add("xxxxxxxxpassword=xxxxxxxxxxx-----BEGIN RSA PRIVATE KEY", 0)
	pre := Default().pre
	f.Fuzz(func(t *testing.T, text string, from int) {
		from = max(0, from) % (len(text) + 1)
		var want, got []hit
		row := uint16(0)
		for i := 0; i < len(text); i++ {
			if row = pre.next[int(row)+int(pre.class[text[i]])]; row&rowHasOutputs != 0 {
				row &^= rowHasOutputs
				pre.report(text, i, row, func(h hit) { want = append(want, h) })
			}
		}
		pre.scan(text, func(h hit) { got = append(got, h) })
		if !slices.Equal(got, want) {
			t.Fatalf("scan(%q) found %v, the automaton on every byte %v", text, got, want)
		}
		skip := pre.skipQuads(text, from)
		for _, h := range want {
			if h.start >= from && h.start < skip {
				t.Fatalf("skipQuads(%q, %d) = %d: past the keyword at %d", text, from, skip, h.start)
			}
		}
	})
}

// referenceSkipPairs is the skip before threes and heads: the first i
// from i on where the pair text[i], text[i+1] begins a keyword, or
// len(text)-1 when no pair does; FuzzSkipHeads holds skipQuads to it.
func (p *prefilter) referenceSkipPairs(text string, i int) int {
	pairs := defaultThreesSkip().pairs
	from := i
	for ; i+8 <= len(text); i += 8 {
		b := text[i : i+8]
		x := uint(b[0]) | uint(b[1])<<8 | uint(b[2])<<16 | uint(b[3])<<24 |
			uint(b[4])<<32 | uint(b[5])<<40 | uint(b[6])<<48 | uint(b[7])<<56
		if (pairs[uint16(x)]|pairs[uint16(x>>16)]|pairs[uint16(x>>32)]|pairs[uint16(x>>48)])&pairNear != 0 {
			break
		}
	}
	for i = max(from, i-1); i+1 < len(text); i++ {
		if pairs[uint16(uint(text[i])|uint(text[i+1])<<8)]&pairStart != 0 {
			break
		}
	}
	return i
}

// referenceScan is scan skipping with referenceSkipPairs.
func (p *prefilter) referenceScan(text string, found func(hit)) {
	for i := 0; ; {
		if i = p.referenceSkipPairs(text, i); i+1 >= len(text) {
			return
		}
		for row := uint16(0); ; {
			row = p.next[int(row)+int(p.class[text[i]])]
			if row&rowHasOutputs != 0 {
				row &^= rowHasOutputs
				p.report(text, i, row, found)
			}
			i++
			if row == 0 {
				break
			}
			if i == len(text) {
				return
			}
		}
	}
}

// FuzzSkipHeads: skipQuads, which passes the pairs that begin a keyword
// where the bytes there begin none (quads, heads), stops only where the
// reference, which stops at every such pair, stops; every pair it passes
// that the reference stops at begins no keyword; and scan finds what the
// reference's scan and the skip before (threesSkip) find, in the same
// order.
func FuzzSkipHeads(f *testing.F) {
	p, old := Default().pre, defaultThreesSkip()
	r := rand.New(rand.NewPCG(7, 8))
	for range 20 {
		f.Add(keywordSoup(r, p, 80), r.IntN(80))
	}
	f.Add("here, there, response, return; SK sk- Q~ YC", 0)
	f.Add("xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxPAT", 5)
	f.Add("the AKIAxxxxxxxxxxxxxxxxxxx akia https://x  _SK", 2)
	// Keywords at both parities, across eight-byte blocks, past ASCII.
	f.Add("xpatxxxxxxxpatxxxxSKxxxxxxxSKxxxxxQ~xxxxxxhttps://x\xc3\xa9sk-x\xf0AKIA", 1)
	f.Add("xxxxxxx-usxxxxxxx:AAxxxxxxxxYCxxxxxxxxxxxxxxxxxxxxxxxxxxxxxpat", 0)
	f.Fuzz(func(t *testing.T, text string, from int) {
		from = max(0, from) % (len(text) + 1)
		starts := map[int]bool{}
		for _, h := range naiveHits(p, text) {
			starts[h.start] = true
		}
		got := p.skipQuads(text, from)
		for i := p.referenceSkipPairs(text, from); i < got && i+1 < len(text); i = p.referenceSkipPairs(text, i+1) {
			if starts[i] {
				t.Fatalf("skipQuads(%q, %d) = %d: past the keyword at %d", text, from, got, i)
			}
		}
		if got+1 < len(text) && p.referenceSkipPairs(text, got) != got {
			t.Fatalf("skipQuads(%q, %d) = %d, where no pair begins a keyword", text, from, got)
		}
		var want, have, before []hit
		p.referenceScan(text, func(h hit) { want = append(want, h) })
		p.scan(text, func(h hit) { have = append(have, h) })
		old.scan(text, func(h hit) { before = append(before, h) })
		if !slices.Equal(have, want) || !slices.Equal(before, want) {
			t.Fatalf("scan(%q) found %v, the reference %v, the skip before %v", text, have, want, before)
		}
	})
}
