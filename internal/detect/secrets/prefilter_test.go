package secrets

import (
	"cmp"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// naiveHits finds every keyword occurrence by comparing each keyword at
// each position: what the automaton, with its skipping, must find.
func naiveHits(p *prefilter, text string) []hit {
	var hits []hit
	for start := range len(text) {
		for ki, k := range p.keywords {
			if start+len(k.text) > len(text) {
				continue
			}
			w := text[start : start+len(k.text)]
			if k.caseSensitive && w == k.text || !k.caseSensitive && asciiEqualFold(w, k.text) {
				hits = append(hits, hit{start: start, keyword: int32(ki)})
			}
		}
	}
	return hits
}

func asciiEqualFold(a, b string) bool {
	for i := range len(a) {
		if lowerASCII(a[i]) != lowerASCII(b[i]) {
			return false
		}
	}
	return true
}

func prefilterHits(p *prefilter, text string) []hit {
	var hits []hit
	last := -1
	p.scan(text, func(h hit) {
		end := h.start + len(p.keywords[h.keyword].text)
		if end < last {
			panic("hits out of order of their ends")
		}
		last = end
		hits = append(hits, h)
	})
	return hits
}

func sortHits(hs []hit) []hit {
	slices.SortFunc(hs, func(a, b hit) int { return cmp.Or(cmp.Compare(a.start, b.start), cmp.Compare(a.keyword, b.keyword)) })
	return hs
}

// keywordSoup is text made of keyword fragments, overlapping keywords,
// case changes and ordinary words: where skipping could go wrong.
func keywordSoup(r *rand.Rand, p *prefilter, n int) string {
	var b strings.Builder
	for b.Len() < n {
		k := p.keywords[r.IntN(len(p.keywords))].text
		switch r.IntN(6) {
		case 0:
			k = k[:r.IntN(len(k))+1]
		case 1:
			k = k[r.IntN(len(k)):]
		case 2:
			k = strings.ToUpper(k)
		case 3:
			k = []string{" ", "the ", "\n", "=", "_", "ab", "x", "\xff"}[r.IntN(8)]
		}
		b.WriteString(k)
	}
	return b.String()
}

func TestPrefilterFindsWhatANaiveSearchFinds(t *testing.T) {
	p := Default().pre
	r := rand.New(rand.NewPCG(1, 2))
	for range 300 {
		text := keywordSoup(r, p, 200)
		if got, want := sortHits(prefilterHits(p, text)), sortHits(naiveHits(p, text)); !slices.Equal(got, want) {
			t.Fatalf("%q:\n got %v\nwant %v", text, got, want)
		}
	}
}

func FuzzPrefilter(f *testing.F) {
	p := Default().pre
	r := rand.New(rand.NewPCG(3, 4))
	for range 20 {
		f.Add(keywordSoup(r, p, 80))
	}
	f.Fuzz(func(t *testing.T, text string) {
		if got, want := sortHits(prefilterHits(p, text)), sortHits(naiveHits(p, text)); !slices.Equal(got, want) {
			t.Fatalf("%q:\n got %v\nwant %v", text, got, want)
		}
	})
}
