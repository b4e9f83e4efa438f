package secrets

import (
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

// FuzzSkipPairs: skipPairs, eight pairs at a time, stops where a pair test
// per byte does.
func FuzzSkipPairs(f *testing.F) {
	f.Add("plain text with a key AKIA and ghp_ in it", 0)
	f.Add(strings.Repeat("x", 100)+"sk-", 3)
	pre := Default().pre
	f.Fuzz(func(t *testing.T, text string, from int) {
		from = max(0, from) % (len(text) + 1)
		want := from
		for ; want+1 < len(text); want++ {
			pair := uint(text[want]) | uint(text[want+1])<<8
			if pre.startPairs[pair/64]&(1<<(pair%64)) != 0 {
				break
			}
		}
		if got := pre.skipPairs(text, from); got != want {
			t.Fatalf("skipPairs(%q, %d) = %d, want %d", text, from, got, want)
		}
	})
}
