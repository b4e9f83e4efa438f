package injection

import (
	"math/rand/v2"
	"testing"
)

// TestASCIILowerAsConverted: asciiLower is the conversion to bytes and
// back it replaced, on strings with and without upper case, ASCII or not.
func TestASCIILowerAsConverted(t *testing.T) {
	ref := func(s string) string {
		b := []byte(s)
		for k, c := range b {
			if 'A' <= c && c <= 'Z' {
				b[k] = c + 'a' - 'A'
			}
		}
		return string(b)
	}
	cases := []string{"", "a", "A", "Runs query 3", "the table to read", "ÀÉ Zz", "\xffA", "@[`{", "AZaz09_-.__X"}
	r := rand.New(rand.NewPCG(7, 8))
	for range 2000 {
		b := make([]byte, r.IntN(40))
		for k := range b {
			b[k] = byte(r.IntN(256))
			if r.IntN(2) == 0 {
				b[k] = byte('@' + r.IntN(60)) // around A-Z and a-z
			}
		}
		cases = append(cases, string(b))
	}
	for _, s := range cases {
		if got, want := asciiLower(s), ref(s); got != want {
			t.Errorf("asciiLower(%q) = %q, want %q", s, got, want)
		}
	}
}
