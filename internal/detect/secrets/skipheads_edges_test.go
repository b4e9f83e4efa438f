package secrets

import (
	"slices"
	"strings"
	"testing"
)

// TestSkipHeadsEveryKeywordEverywhere: every keyword of the default
// rules (two- and three-byte ones, those with digits, '-', '_', '~', '/',
// ':' included), in lower, upper and its written case, at each place of
// an eight-byte block and as the text's last bytes, among filler bytes
// that the skip's 0x20 fold makes look like keyword bytes (a byte with
// its 0x20 bit cleared: '\r' for '-', 0x10 for '0', '?' for '_'... and
// non-ASCII), is found where the automaton run over every byte finds it:
// the fold and the hashed tests only add places to look, never lose one.
func TestSkipHeadsEveryKeywordEverywhere(t *testing.T) {
	p := Default().pre
	fillers := []string{"x", " ", "\r", "\x00", "\xff", "é"}
	for _, k := range p.keywords {
		var folded []byte
		for i := 0; i < len(k.text); i++ {
			folded = append(folded, k.text[i]&^0x20)
		}
		fillers := append(fillers, string(folded))
		for _, kw := range []string{k.text, strings.ToLower(k.text), strings.ToUpper(k.text)} {
			for _, fill := range fillers {
				for before := range 10 {
					for _, after := range []int{0, 1, 3, 9} {
						text := strings.Repeat(fill, before)[:before] + kw + strings.Repeat(fill, after)[:after]
						want := naiveHits(p, text)
						var have []hit
						p.scan(text, func(h hit) { have = append(have, h) })
						slices.SortStableFunc(have, func(a, b hit) int { return a.start - b.start })
						slices.SortStableFunc(want, func(a, b hit) int { return a.start - b.start })
						if !sameHits(have, want) {
							t.Fatalf("scan(%q) found %v, every byte's automaton %v", text, have, want)
						}
					}
				}
			}
		}
	}
}

// sameHits: the same hits, whatever the order of those at one start.
func sameHits(a, b []hit) bool {
	if len(a) != len(b) {
		return false
	}
	for _, h := range a {
		if !slices.Contains(b, h) {
			return false
		}
	}
	return true
}
