package jsonrpc

import (
	"encoding/json"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/mcpgate/mcpgate/internal/jsonnum"
)

// key is the id as the table of requests in flight knows it: an id is a
// value, so two spellings of one ("a\u0062" and "ab", 1e2 and 100) are one
// request, to a cancellation and to the duplicate check alike. A client
// library that parses ids and writes them again may spell one its own way.
// An id written plainly (no escape; a whole number without exponent or
// fraction), nearly every id, is its own key, found without parsing it.
func (id ID) key() ID {
	raw := id.raw
	if raw == "" {
		return id
	}
	if raw[0] == '"' {
		if !strings.Contains(raw, `\`) {
			return id
		}
		var s string
		if json.Unmarshal([]byte(raw), &s) != nil {
			return id
		}
		if strings.ContainsRune(s, utf8.RuneError) {
			// Decoding turned a lone surrogate or a byte that is not
			// UTF-8 into U+FFFD: "\ud800" and "\ud801" would be one id.
			// Such an id is its spelling, in a form no raw id has.
			return ID{"?" + raw}
		}
		if plainString(s) {
			return ID{`"` + s + `"`} // as the plain spelling is written
		}
		b, _ := json.Marshal(s) // needs escapes however written: one form for all
		return ID{"\\" + string(b)}
	}
	if plainInteger(raw) {
		return id
	}
	d, ok := jsonnum.ParseDecimal(raw)
	if !ok {
		return id
	}
	if n, ok := d.Integer(40); ok {
		return ID{n}
	}
	// Not whole, or too big to write out: a form no id's raw text has.
	sign := ""
	if d.Neg {
		sign = "-"
	}
	return ID{"~" + sign + "0." + d.Digits + "e" + strconv.FormatInt(d.Exp, 10)}
}

// plainString reports whether s can be written in JSON without escapes.
func plainString(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == '"' || c == '\\' {
			return false
		}
	}
	return true
}

// plainInteger reports whether raw, a JSON number, is a whole number
// written plainly: digits, no leading zero, no "-0".
func plainInteger(raw string) bool {
	digits := strings.TrimPrefix(raw, "-")
	if digits == "" || digits[0] == '0' && (len(digits) > 1 || len(raw) > 1) {
		return false
	}
	for i := 0; i < len(digits); i++ {
		if digits[i] < '0' || digits[i] > '9' {
			return false
		}
	}
	return true
}
