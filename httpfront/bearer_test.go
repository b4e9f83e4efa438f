package httpfront

import (
	"net/http"
	"strings"
	"testing"

	"github.com/mcpgate/mcpgate/config"
)

// TestBearerTokens: a token is valid when it is one of the configured
// ones, whole, under a case-insensitive scheme; its client is named by
// its hash, made once per configured token, not for every request (3
// allocations and a SHA-256 each).
func TestBearerTokens(t *testing.T) {
	tokens := []string{strings.Repeat("a", 64), strings.Repeat("b", 64), "short"}
	for _, c := range []struct {
		header string
		want   bool
	}{
		{"Bearer " + tokens[0], true},
		{"bearer  " + tokens[1], true},
		{"BEARER short", true},
		{"Bearer " + tokens[0][:63], false},
		{"Bearer " + tokens[0] + "a", false},
		{"Bearer shorT", false},
		{"Basic short", false},
		{"Bearer", false},
		{"", false},
	} {
		if got := BearerValid(tokens, c.header); got != c.want {
			t.Errorf("BearerValid(%q) = %v, want %v", c.header, got, c.want)
		}
	}
	header := "Bearer " + tokens[1]
	if n := testing.AllocsPerRun(100, func() { BearerValid(tokens, header) }); n != 0 {
		t.Errorf("checking a bearer token of 64 bytes takes %.0f allocations; want none", n)
	}

	f := &Front{cfg: config.HTTP{Tokens: tokens}}
	for _, token := range append(tokens, "not-configured") {
		r := &http.Request{Header: http.Header{"Authorization": {"Bearer " + token}}}
		if got, want := f.clientOf(r), clientName(token); got != want {
			t.Errorf("clientOf(token %q) = %q, want %q", token, got, want)
		}
	}
	r := &http.Request{Header: http.Header{"Authorization": {"Bearer " + tokens[2]}}}
	if n := testing.AllocsPerRun(100, func() { f.clientOf(r) }); n != 0 {
		t.Errorf("naming the client of a configured token takes %.0f allocations; want none", n)
	}
}
