package jsonnum

import (
	"encoding/json"
	"strconv"
	"strings"
)

// Decimal is a JSON number in the form in which two numbers are equal
// exactly when their forms are: 0.digits × 10^exp, digits with no leading
// or trailing zero ("" for zero, whatever its sign). Reading one takes
// time in its length only; big.Rat, exact too, expanded 1e999999 into a
// million digits.
type Decimal struct {
	Neg    bool
	Digits string
	Exp    int64
}

// maxExp bounds the exponents read: a number beyond it is not read (no
// client sends one).
const maxExp = 1 << 60

// ParseDecimal reads a JSON number (not Go's: no hex, no leading +).
func ParseDecimal(s string) (Decimal, bool) {
	if s == "" || !(s[0] == '-' || '0' <= s[0] && s[0] <= '9') || !('0' <= s[len(s)-1] && s[len(s)-1] <= '9') || !json.Valid([]byte(s)) {
		return Decimal{}, false // a number ends with a digit: no space around it
	}
	var d Decimal
	if s[0] == '-' {
		d.Neg, s = true, s[1:]
	}
	mantissa, exponent, hasExp := s, "", false
	if i := strings.IndexAny(s, "eE"); i >= 0 {
		mantissa, exponent, hasExp = s[:i], s[i+1:], true
	}
	whole, frac, _ := strings.Cut(mantissa, ".")
	digits := whole + frac
	trimmed := strings.TrimLeft(digits, "0")
	d.Digits = strings.TrimRight(trimmed, "0")
	if d.Digits == "" {
		return Decimal{}, true // zero, whatever its exponent: -0 is 0
	}
	if hasExp {
		e, err := strconv.ParseInt(exponent, 10, 64)
		if err != nil || e > maxExp || e < -maxExp {
			return Decimal{}, false
		}
		d.Exp = e
	}
	d.Exp += int64(len(whole)) - int64(len(digits)-len(trimmed))
	return d, true
}

// Integer returns the decimal digits of d when it is a whole number of at
// most maxDigits digits, as JSON writes it plainly ("100" for 1e2).
func (d Decimal) Integer(maxDigits int) (string, bool) {
	if d.Digits == "" {
		return "0", true
	}
	if d.Exp < int64(len(d.Digits)) || d.Exp > int64(maxDigits) {
		return "", false
	}
	s := d.Digits + strings.Repeat("0", int(d.Exp)-len(d.Digits))
	if d.Neg {
		s = "-" + s
	}
	return s, true
}
