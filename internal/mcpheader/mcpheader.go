// Package mcpheader is the codec of the HTTP headers that MCP 2026-07-28
// Streamable HTTP mirrors from a request's body, so that load balancers and
// gateways can route and check a request without parsing it: Mcp-Method,
// Mcp-Name (a tool's or prompt's name, a resource's URI) and
// Mcp-Param-{Name} (a tool argument its inputSchema designates with an
// x-mcp-header annotation). It holds the value encoding (plain, or
// =?base64?…?= for what a header cannot carry), the annotation rules, and
// the comparison of a header with the body it mirrors. It does no I/O.
//
//	params, err := mcpheader.Params(inputSchema) // err: the tool is invalid
//	err = mcpheader.CheckParams(params, arguments, r.Header.Values)
package mcpheader

import (
	"encoding/base64"
	"errors"
	"strings"
	"unicode/utf8"
)

// The headers, as the spec spells them (names compare case-insensitively).
const (
	ProtocolVersion = "MCP-Protocol-Version"
	Method          = "Mcp-Method"
	Name            = "Mcp-Name"
	// ParamPrefix precedes an x-mcp-header annotation's value:
	// "x-mcp-header": "Region" is the header Mcp-Param-Region.
	ParamPrefix = "Mcp-Param-"
	// Annotation is the inputSchema keyword that designates an argument.
	Annotation = "x-mcp-header"
)

// The markers of an encoded value: case-sensitive, lowercase.
const (
	base64Prefix = "=?base64?"
	base64Suffix = "?="
)

// Decode errors. Both are the client's fault: over HTTP, a header
// mismatch (-32020).
var (
	// ErrBadBase64 is returned for a value in the =?base64?…?= form whose
	// inside is not padded standard Base64 of UTF-8 text.
	ErrBadBase64 = errors.New("is not valid Base64 of UTF-8 text between =?base64? and ?=")
	// ErrBadChars is returned for a plain value with a byte a header value
	// may not carry unencoded (a control character, non-ASCII).
	ErrBadChars = errors.New("holds characters a plain header value may not (control characters or non-ASCII); send them as =?base64?…?=")
)

// Encode returns the header value that carries s: s itself when a header
// can carry it as is, else =?base64?{Base64 of UTF-8}?=. A header cannot
// carry non-ASCII bytes or control characters (tab included), nor keep
// leading or trailing spaces (they are trimmed as whitespace around the
// value); a value that looks encoded is encoded, so that it is not taken
// for its decoding. An empty string stays empty: the header is sent with
// an empty value.
func Encode(s string) string {
	if plainSafe(s) {
		return s
	}
	return base64Prefix + base64.StdEncoding.EncodeToString([]byte(s)) + base64Suffix
}

func plainSafe(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] > 0x7e {
			return false
		}
	}
	if s != "" && (s[0] == ' ' || s[len(s)-1] == ' ') {
		return false
	}
	return !looksEncoded(s)
}

func looksEncoded(s string) bool {
	return len(s) >= len(base64Prefix)+len(base64Suffix) && strings.HasPrefix(s, base64Prefix) && strings.HasSuffix(s, base64Suffix)
}

// Decode returns the text a header value carries: whitespace around it
// trimmed (RFC 9110 section 5.5: it is not part of the value), then the
// =?base64?…?= form decoded. A value without both markers is taken as it
// is, not decoded.
func Decode(v string) (string, error) {
	v = strings.Trim(v, " \t")
	if !looksEncoded(v) {
		for i := 0; i < len(v); i++ {
			if (v[i] < 0x20 && v[i] != '\t') || v[i] > 0x7e {
				return "", ErrBadChars
			}
		}
		return v, nil
	}
	inner := v[len(base64Prefix) : len(v)-len(base64Suffix)]
	if strings.ContainsAny(inner, "\r\n") { // the decoder would skip them
		return "", ErrBadBase64
	}
	b, err := base64.StdEncoding.Strict().DecodeString(inner)
	if err != nil || !utf8.Valid(b) {
		return "", ErrBadBase64
	}
	return string(b), nil
}
