package mcpheader

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/mcpgate/mcpgate/internal/jsonnum"
)

// Lookup returns the argument p designates in arguments (the tools/call
// params.arguments object); ok is false when it is absent or null, and
// then no header may carry it.
func (p Param) Lookup(arguments json.RawMessage) (value json.RawMessage, ok bool) {
	value = arguments
	for _, name := range p.Path {
		var obj map[string]json.RawMessage
		if json.Unmarshal(value, &obj) != nil {
			return nil, false
		}
		if value, ok = obj[name]; !ok {
			return nil, false
		}
	}
	if value = bytes.TrimSpace(value); len(value) == 0 || string(value) == "null" {
		return nil, false
	}
	return value, true
}

// EncodeArg returns the header value a client sends for an argument's
// JSON value: a string encoded (see Encode), a number as its decimal
// text, a boolean as true or false. ok is false for anything else (null,
// an object, an array): such a value is not mirrored.
func EncodeArg(value json.RawMessage) (header string, ok bool) {
	value = bytes.TrimSpace(value)
	switch {
	case len(value) == 0:
		return "", false
	case value[0] == '"':
		var s string
		if json.Unmarshal(value, &s) != nil {
			return "", false
		}
		return Encode(s), true
	case string(value) == "true" || string(value) == "false":
		return string(value), true
	case value[0] == '-' || '0' <= value[0] && value[0] <= '9':
		return string(value), json.Valid(value)
	}
	return "", false
}

// Matches reports whether decoded (a header value, after Decode) carries
// the argument's JSON value: the same text for a string, the same number
// for a number (42.0 is 42: integers compare numerically), the same
// literal for a boolean. A value a client would not mirror matches
// nothing.
func Matches(decoded string, value json.RawMessage) bool {
	value = bytes.TrimSpace(value)
	if len(value) == 0 {
		return false
	}
	switch c := value[0]; {
	case c == '"':
		var s string
		return json.Unmarshal(value, &s) == nil && s == decoded
	case string(value) == "true" || string(value) == "false":
		return decoded == string(value)
	case c == '-' || '0' <= c && c <= '9':
		a, okA := jsonnum.ParseDecimal(string(value))
		b, okB := jsonnum.ParseDecimal(decoded)
		return okA && okB && a == b
	}
	return false
}

// CheckParams checks the Mcp-Param headers of a tools/call against its
// arguments, as the spec's server validation says: for each designated
// argument present (not null) in the body, its header must be there, once,
// and carry the same value; for one absent or null, its header must not be
// there. values returns the values of a header by name, case-insensitively
// (http.Header.Values). Headers no parameter names are ignored. The error
// names the header, never the values: arguments may be secret.
func CheckParams(params []Param, arguments json.RawMessage, values func(name string) []string) error {
	for _, p := range params {
		header := p.HeaderName()
		arg := "arguments." + strings.Join(p.Path, ".")
		got := values(header)
		value, present := p.Lookup(arguments)
		switch {
		case !present && len(got) > 0:
			return fmt.Errorf("the %s header is sent but %s is absent or null; send the header only with the argument", header, arg)
		case !present:
			continue
		case len(got) == 0:
			if _, mirrored := EncodeArg(value); mirrored {
				return fmt.Errorf("the %s header is missing: the tool's inputSchema designates %s (x-mcp-header), and the body has it; list the tools again and send the headers it designates", header, arg)
			}
			continue // an object or array at that path: nothing a header could carry
		case len(got) > 1:
			return fmt.Errorf("the %s header is sent %d times; send it once", header, len(got))
		}
		decoded, err := Decode(got[0])
		if err != nil {
			return fmt.Errorf("the %s header %v", header, err)
		}
		if !Matches(decoded, value) {
			return fmt.Errorf("the %s header does not match %s in the body", header, arg)
		}
	}
	return nil
}
