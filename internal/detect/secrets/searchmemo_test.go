package secrets

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// searchTexts are texts where a pattern, parts of it and its first bytes
// are dense: where a search that reads on from a remembered one could go
// wrong.
func searchTexts(r *rand.Rand, pattern string) []string {
	var texts []string
	for range 40 {
		var b strings.Builder
		for b.Len() < 200+r.IntN(2000) {
			switch n := r.IntN(16); {
			case n == 0:
				b.WriteString(pattern)
			case n < 6:
				b.WriteString(pattern[:r.IntN(len(pattern))])
			case n < 11:
				b.WriteString(pattern[r.IntN(len(pattern)):])
			default:
				b.WriteString(strings.Repeat("x", r.IntN(100)))
			}
		}
		texts = append(texts, b.String())
	}
	return texts
}

// searchQueries are (from, limit) pairs as the rules make them: a window
// of up to width bytes from each keyword on, the keywords mostly in order,
// now and then going back.
func searchQueries(r *rand.Rand, size, width int) [][2]int {
	var qs [][2]int
	from := 0
	for range 200 {
		if r.IntN(8) == 0 {
			from = r.IntN(size + 1)
		} else {
			from = min(size, from+r.IntN(width/4+1))
		}
		qs = append(qs, [2]int{from, min(size, from+r.IntN(width+1))})
	}
	return qs
}

// TestSearchMemoIsAFreshSearch: whatever was searched before, index
// answers what strings.Index answers.
func TestSearchMemoIsAFreshSearch(t *testing.T) {
	r := rand.New(rand.NewPCG(14, 6))
	for _, pattern := range []string{puttyMAC, puttyLines, "ab"} {
		for _, text := range searchTexts(r, pattern) {
			var m searchMemo
			for _, q := range searchQueries(r, len(text), 300) {
				want := strings.Index(text[q[0]:q[1]], pattern)
				if want >= 0 {
					want += q[0]
				}
				if got := m.index(text, pattern, q[0], q[1]); got != want {
					t.Fatalf("%q in text[%d:%d]: %d, want %d (text %q)", pattern, q[0], q[1], got, want, text)
				}
			}
		}
	}
}

// referencePEMFooter is nextPEMFooter before it read on from a search that
// found nothing: each answer of the new one, and what it remembers, must
// be the same (a remembered footer may lie past a later limit: matchPEM
// then reads past it, and so must go on doing).
func (st *scanState) referencePEMFooter(text string, from, limit int) int {
	if st.footerFrom <= from && (st.footerAt >= from || st.footerAt < 0 && st.footerLimit >= limit) {
		if st.footerAt >= limit {
			return -1
		}
		return st.footerAt
	}
	st.footerFrom, st.footerLimit, st.footerAt = from, limit, -1
	if i := strings.Index(text[from:limit], pemEnd); i >= 0 {
		st.footerAt = from + i
	}
	return st.footerAt
}

func TestPEMFooterAsBefore(t *testing.T) {
	r := rand.New(rand.NewPCG(14, 7))
	for _, text := range searchTexts(r, pemEnd) {
		got, want := &scanState{}, &scanState{}
		got.reset()
		want.reset()
		for _, q := range searchQueries(r, len(text), 300) {
			g, w := got.nextPEMFooter(text, q[0], q[1]), want.referencePEMFooter(text, q[0], q[1])
			if g != w || got.footerAt != want.footerAt || got.footerFrom != want.footerFrom || got.footerLimit != want.footerLimit {
				t.Fatalf("text[%d:%d]: %d (state %d %d %d), want %d (%d %d %d)", q[0], q[1],
					g, got.footerFrom, got.footerLimit, got.footerAt, w, want.footerFrom, want.footerLimit, want.footerAt)
			}
		}
	}
}
