package secrets

import (
	"slices"
	"strings"
	"testing"
)

// BenchmarkSkipPairs: the prefilter's skip over plain ASCII without
// keywords.
func BenchmarkSkipPairs(b *testing.B) {
	for _, tc := range []struct{ name, text string }{
		{"x", strings.Repeat("x", 1<<20)},
		{"prose", strings.Repeat("The quick brown fox jumps over the lazy dog; logs, numbers 0123456789. ", 1<<20/72)},
	} {
		b.Run(tc.name, func(b *testing.B) {
			pre := Default().pre
			b.SetBytes(int64(len(tc.text)))
			for b.Loop() {
				pre.skipPairs(tc.text, 0)
			}
		})
	}
}

// FuzzSkipPairs: scan, skipping with skipPairs (every other pair eight
// bytes at a time), finds the keyword occurrences the automaton finds run
// over every byte, in the same order; and skipPairs never passes the start
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
		skip := pre.skipPairs(text, from)
		for _, h := range want {
			if h.start >= from && h.start < skip {
				t.Fatalf("skipPairs(%q, %d) = %d: past the keyword at %d", text, from, skip, h.start)
			}
		}
	})
}
