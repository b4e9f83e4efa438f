package injection

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// TestCommonBreaks: commonBreaks flags exactly the bytes of eight that
// are white space, commas or from 0x80 up, whatever their neighbours
// (no borrow crosses bytes), and each is a token break.
func TestCommonBreaks(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 8))
	for range 100000 {
		var b [8]byte
		for k := range b {
			b[k] = byte(r.IntN(256))
			if r.IntN(2) == 0 {
				b[k] = " \t\n\v\f\r,\x00\x08\x0e\x1f!+-\x7f\x80"[r.IntN(16)]
			}
		}
		m := commonBreaks(load64(string(b[:]), 0))
		for k, c := range b {
			want := c == ' ' || '\t' <= c && c <= '\r' || c == ',' || c >= 0x80
			if got := m>>(8*k+7)&1 == 1; got != want {
				t.Fatalf("commonBreaks(%q): byte %d (%q) flagged %v, want %v", b, k, c, got, want)
			}
			if want && !isTokenBreak(c) {
				t.Fatalf("%q is flagged but no token break", c)
			}
		}
	}
}

// TestHoldsEither: holdsEither finds either byte wherever it is, whatever
// its neighbours (the escapes' '%' and '\\', base64url's '-' and '_').
func TestHoldsEither(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 10))
	for range 20000 {
		pair := []string{"%\\", "-_"}[r.IntN(2)]
		b := make([]byte, r.IntN(40))
		for k := range b {
			b[k] = "ab%\\-_,.^`\x00\x80]\x5b"[r.IntN(14)]
			if r.IntN(3) > 0 {
				b[k] = 'a'
			}
		}
		s := string(b)
		if got, want := holdsEither(s, pair[0], pair[1]), strings.ContainsAny(s, pair); got != want {
			t.Fatalf("holdsEither(%q, %q, %q) = %v, want %v", s, pair[0], pair[1], got, want)
		}
	}
}
