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
		if json.Unmarshal([]byte(raw), &s) != nil || strings.ContainsRune(s, utf8.RuneError) {
			// encoding/json reads a lone surrogate and a byte that is not
			// UTF-8 as U+FFFD, so s may not be the id's value: the id is
			// then its own key (one with a backslash after its quote, a
			// form no other key has), and only that spelling matches it.
			return id
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

// SameValue reports whether id and other are one id however each is spelt
// (3 and 3.0, "ab" and "a\u0062"): an answer is matched to its call so,
// wherever it comes from.
func (id ID) SameValue(other ID) bool { return id == other || id.key() == other.key() }

// ValueKey is the id as a table of our requests keys it: the spelling our
// own ids have (a plain integer is its own key), for any spelling of one.
func (id ID) ValueKey() ID { return id.key() }

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
