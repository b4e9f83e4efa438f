package mcpheader

import (
	"encoding/json"
	"strconv"
	"strings"
)

// decimal is a JSON number in the form in which two numbers are equal
// exactly when their forms are: 0.digits × 10^exp, digits with no leading
// or trailing zero ("" for zero, whatever its sign). Reading one takes
// time in its length only; big.Rat, exact too, expanded 1e999999 into a
// million digits.
type decimal struct {
	neg    bool
	digits string
	exp    int64
}

// maxExp bounds the exponents compared: a header whose number is beyond
// it matches nothing (no client sends one).
const maxExp = 1 << 60

// parseDecimal reads a JSON number (not Go's: no hex, no leading +).
func parseDecimal(s string) (decimal, bool) {
	if s == "" || !(s[0] == '-' || '0' <= s[0] && s[0] <= '9') || !('0' <= s[len(s)-1] && s[len(s)-1] <= '9') || !json.Valid([]byte(s)) {
		return decimal{}, false // a number ends with a digit: no space around it
	}
	var d decimal
	if s[0] == '-' {
		d.neg, s = true, s[1:]
	}
	mantissa, exponent, hasExp := s, "", false
	if i := strings.IndexAny(s, "eE"); i >= 0 {
		mantissa, exponent, hasExp = s[:i], s[i+1:], true
	}
	whole, frac, _ := strings.Cut(mantissa, ".")
	digits := whole + frac
	trimmed := strings.TrimLeft(digits, "0")
	d.digits = strings.TrimRight(trimmed, "0")
	if d.digits == "" {
		return decimal{}, true // zero, whatever its exponent: -0 is 0
	}
	if hasExp {
		e, err := strconv.ParseInt(exponent, 10, 64)
		if err != nil || e > maxExp || e < -maxExp {
			return decimal{}, false
		}
		d.exp = e
	}
	d.exp += int64(len(whole)) - int64(len(digits)-len(trimmed))
	return d, true
}
