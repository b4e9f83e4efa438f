package mcpheader

import (
	"errors"
	"testing"
	"unicode/utf8"
)

// The spec's encoding table (2026-07-28, Streamable HTTP, "Custom Headers
// from Tool Parameters"), and the cases the conformance suite's client
// fixture sends (http-custom-headers).
var codecCases = []struct {
	text, header string
}{
	{"us-west1", "us-west1"},
	{"", ""},
	{"hello world", "hello world"}, // inner spaces are fine
	{"Hello, 世界", "=?base64?SGVsbG8sIOS4lueVjA==?="},
	{" padded ", "=?base64?IHBhZGRlZCA=?="},
	{"=?base64?literal?=", "=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?="},
	{" lead", "=?base64?IGxlYWQ=?="},
	{"trail ", "=?base64?dHJhaWwg?="},
	{"a\tb", "=?base64?YQli?="}, // tab is a control character
	{"line1\r\nline2", "=?base64?bGluZTENCmxpbmUy?="},
	{"bell\x07", "=?base64?YmVsbAc=?="},
	{"del\x7f", "=?base64?ZGVsfw==?="},
	{"=?base64?", "=?base64?"},       // a prefix alone is not the encoded form
	{"=?base64?SGk", "=?base64?SGk"}, // nor is one without the suffix
}

func TestEncodeDecode(t *testing.T) {
	for _, c := range codecCases {
		if got := Encode(c.text); got != c.header {
			t.Errorf("Encode(%q) = %q, want %q", c.text, got, c.header)
		}
		if got, err := Decode(c.header); err != nil || got != c.text {
			t.Errorf("Decode(%q) = %q, %v; want %q", c.header, got, err, c.text)
		}
	}
}

func TestDecode(t *testing.T) {
	for _, c := range []struct {
		header, text string
		err          error
	}{
		{"  name  ", "name", nil},                           // whitespace around a value is not part of it
		{"\t=?base64?SGVsbG8=?= ", "Hello", nil},            // trimmed before decoding
		{"SGVsbG8=", "SGVsbG8=", nil},                       // no markers: literal
		{"=?base64?SGVsbG8=", "=?base64?SGVsbG8=", nil},     // no suffix: literal
		{"a\tb", "a\tb", nil},                               // a tab inside a field value is allowed
		{"=?base64?SGVsbG8?=", "", ErrBadBase64},            // missing padding
		{"=?base64?SGVs!!!bG8=?=", "", ErrBadBase64},        // not the alphabet
		{"=?base64?SGVs\nbG8=?=", "", ErrBadBase64},         // the decoder would skip the newline
		{"=?base64?/w==?=", "", ErrBadBase64},               // not UTF-8
		{"=?BASE64?SGVsbG8=?=", "=?BASE64?SGVsbG8=?=", nil}, // markers are case-sensitive
		{"caf\xc3\xa9", "", ErrBadChars},
		{"nul\x00", "", ErrBadChars},
	} {
		got, err := Decode(c.header)
		if !errors.Is(err, c.err) || got != c.text {
			t.Errorf("Decode(%q) = %q, %v; want %q, %v", c.header, got, err, c.text, c.err)
		}
	}
}

// Whatever a string holds, its encoding is a header value the decoder
// gives back whole.
func FuzzEncodeDecode(f *testing.F) {
	for _, c := range codecCases {
		f.Add(c.text)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if !utf8.ValidString(s) {
			return // tool arguments are JSON strings: UTF-8
		}
		h := Encode(s)
		for i := 0; i < len(h); i++ {
			if h[i] < 0x20 || h[i] > 0x7e {
				t.Fatalf("Encode(%q) = %q: byte %#x cannot go in a header", s, h, h[i])
			}
		}
		if got, err := Decode(h); err != nil || got != s {
			t.Fatalf("Decode(Encode(%q)) = %q, %v", s, got, err)
		}
	})
}

func FuzzDecode(f *testing.F) {
	for _, c := range codecCases {
		f.Add(c.header)
	}
	f.Fuzz(func(t *testing.T, h string) {
		Decode(h) // must not panic
	})
}
