package mcpheader

import (
	"encoding/json"
	"math/big"
	"runtime"
	"strings"
	"testing"

	"github.com/mcpgate/mcpgate/internal/jsonnum"
)

// Comparing a number header with its argument costs what reading the two
// takes, whatever their exponents: big.Rat expanded 1e999999 into a
// million digits (about 10 MiB and up to a second of CPU) for each side
// of each check, and a modern request may carry many such headers.
func TestMatchesHugeExponentsCostLittle(t *testing.T) {
	for _, c := range []struct {
		header, value string
		want          bool
	}{
		{"1e999999", `1e999999`, true},
		{"10e999998", `1e999999`, true},
		{"1e999999", `2e999999`, false},
		{"123456789e-999999", `123456789e-999999`, true},
		{"1e1000001", `10e1000000`, true},                           // big.Rat gave up past 1e6
		{"1e99999999999999999999", `1e99999999999999999999`, false}, // past any exponent compared
	} {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		got := Matches(c.header, json.RawMessage(c.value))
		runtime.ReadMemStats(&after)
		if got != c.want {
			t.Errorf("Matches(%q, %s) = %v, want %v", c.header, c.value, got, c.want)
		}
		if n := after.TotalAlloc - before.TotalAlloc; n > 1<<20 { // generous: a few hundred bytes are enough
			t.Errorf("Matches(%q, %s) allocated %d bytes", c.header, c.value, n)
		}
	}
}

// FuzzNumbersAsRat checks the number comparison against big.Rat's, for
// numbers whose exponents big.Rat takes in its stride.
func FuzzNumbersAsRat(f *testing.F) {
	for _, s := range [][2]string{{"42", "42.0"}, {"4.2e1", "42"}, {"-0", "0"}, {"0.00100", "1e-3"}, {"9007199254740993", "9007199254740992"}, {"1E+2", "100"}, {"-1.5", "-15e-1"}} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		if len(a) > 64 || len(b) > 64 || longExponent(a) || longExponent(b) {
			return // big.Rat gives up on large exponents, by rules of its own
		}
		da, okDA := jsonnum.ParseDecimal(a)
		db, okDB := jsonnum.ParseDecimal(b)
		ra, okA := ratNumber(a)
		rb, okB := ratNumber(b)
		if okA != okDA || okB != okDB {
			t.Fatalf("%q, %q: accepted as numbers %v %v, big.Rat %v %v", a, b, okDA, okDB, okA, okB)
		}
		if okA && okB && (ra.Cmp(rb) == 0) != (da == db) {
			t.Fatalf("%q == %q: %v, big.Rat says %v", a, b, da == db, ra.Cmp(rb) == 0)
		}
	})
}

// longExponent reports whether s has an exponent of more than 4 digits.
func longExponent(s string) bool {
	i := strings.IndexAny(s, "eE")
	return i >= 0 && len(strings.TrimLeft(s[i+1:], "+-0")) > 4
}

// ratNumber is how numbers were compared before: exact, through big.Rat.
func ratNumber(s string) (*big.Rat, bool) {
	if s == "" || !(s[0] == '-' || '0' <= s[0] && s[0] <= '9') || !json.Valid([]byte(s)) {
		return nil, false
	}
	return new(big.Rat).SetString(s)
}
