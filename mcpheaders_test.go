package main

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"maps"
	"slices"
	"strconv"
	"strings"
)

// The HTTP headers of the 2026-07-28 wire that mirror a request's body
// (spec2026.md §6.2, §6.6): mcpclient writes them, the fake checks them.

// modernVersion is the protocol version of the modern era.
const modernVersion = "2026-07-28"

// isModernVersion reports whether a version string claims the modern era.
// Both SDKs compare lexicographically, so an unknown claim such as
// "v999.0.0" counts as modern (and unsupported), never as legacy.
func isModernVersion(v string) bool { return v >= modernVersion }

// nameHeaderSource is the body field that Mcp-Name mirrors, by method.
var nameHeaderSource = map[string]string{
	"tools/call":     "name",
	"prompts/get":    "name",
	"resources/read": "uri",
}

const base64Open, base64Close = "=?base64?", "?="

// encodeHeaderValue is how a value travels in Mcp-Name or Mcp-Param-*: as
// is when it is a plain ASCII header value, else as =?base64?…?= (non-ASCII,
// control characters, leading or trailing blanks, or text that looks like
// the encoded form itself).
func encodeHeaderValue(v string) string {
	if headerSafe(v) {
		return v
	}
	return base64Open + base64.StdEncoding.EncodeToString([]byte(v)) + base64Close
}

func headerSafe(v string) bool {
	if strings.HasPrefix(v, base64Open) && strings.HasSuffix(v, base64Close) {
		return false
	}
	if v != strings.Trim(v, " \t") {
		return false
	}
	for i := 0; i < len(v); i++ {
		if v[i] < 0x20 || v[i] > 0x7e {
			return false
		}
	}
	return true
}

// decodeHeaderValue undoes encodeHeaderValue after trimming the optional
// whitespace HTTP allows around a value; ok is false for a bad encoding.
func decodeHeaderValue(h string) (string, bool) {
	h = strings.Trim(h, " \t")
	inner, found := strings.CutPrefix(h, base64Open)
	if !found || !strings.HasSuffix(inner, base64Close) {
		return h, true
	}
	b, err := base64.StdEncoding.DecodeString(strings.TrimSuffix(inner, base64Close))
	return string(b), err == nil
}

// headerParam is one tool argument mirrored into a header: the property
// path in the arguments and the header's name after Mcp-Param-.
type headerParam struct {
	path []string
	name string
}

// headerParams finds the x-mcp-header annotations of an inputSchema, on
// properties reached through "properties" keys only (the spec's static
// chain).
func headerParams(schema json.RawMessage) []headerParam {
	var out []headerParam
	var walk func(schema json.RawMessage, path []string)
	walk = func(schema json.RawMessage, path []string) {
		var s struct {
			Properties map[string]json.RawMessage `json:"properties"`
		}
		if json.Unmarshal(schema, &s) != nil {
			return
		}
		for _, name := range slices.Sorted(maps.Keys(s.Properties)) {
			prop := s.Properties[name]
			p := append(append([]string{}, path...), name)
			var annotated struct {
				Header *string `json:"x-mcp-header"`
			}
			if json.Unmarshal(prop, &annotated) == nil && annotated.Header != nil && *annotated.Header != "" {
				out = append(out, headerParam{path: p, name: *annotated.Header})
			}
			walk(prop, p)
		}
	}
	walk(schema, nil)
	return out
}

// argumentAt returns the raw value at path in a tool call's arguments; nil
// when absent or null (no header then).
func argumentAt(args json.RawMessage, path []string) json.RawMessage {
	v := args
	for _, k := range path {
		var m map[string]json.RawMessage
		if json.Unmarshal(v, &m) != nil {
			return nil
		}
		v = m[k]
	}
	if v == nil || string(bytes.TrimSpace(v)) == "null" {
		return nil
	}
	return v
}

// paramHeaderValue is the header form of an argument: strings (encoded
// when needed), numbers as written, booleans; "", false for anything else.
func paramHeaderValue(v json.RawMessage) (string, bool) {
	v = bytes.TrimSpace(v)
	if len(v) == 0 {
		return "", false
	}
	switch c := v[0]; {
	case c == '"':
		var s string
		if json.Unmarshal(v, &s) != nil {
			return "", false
		}
		return encodeHeaderValue(s), true
	case c == 't' || c == 'f':
		return string(v), true
	case c == '-' || (c >= '0' && c <= '9'):
		return string(v), true
	}
	return "", false
}

// paramHeaderMatches reports whether a received Mcp-Param-* value says what
// the body does. Numbers compare by value (42.0 is 42).
func paramHeaderMatches(header string, body json.RawMessage) bool {
	got, ok := decodeHeaderValue(header)
	if !ok {
		return false
	}
	body = bytes.TrimSpace(body)
	switch {
	case len(body) > 0 && body[0] == '"':
		var s string
		return json.Unmarshal(body, &s) == nil && s == got
	case len(body) > 0 && (body[0] == '-' || (body[0] >= '0' && body[0] <= '9')):
		a, err1 := strconv.ParseFloat(got, 64)
		b, err2 := strconv.ParseFloat(string(body), 64)
		return err1 == nil && err2 == nil && a == b
	}
	return got == string(body)
}
