package httpfront

import (
	"io"
	"net/http"
	"strings"
	"testing"
)

// A POST to the MCP path skips the mux's match (Front.postDirect), but
// goes where the mux would send it: with "path" set to the legacy
// transport's /messages, a POST there is still the legacy endpoint's (the
// mux's "POST /messages" is the more specific pattern); with "/" or
// "/mcp", it is MCP's.
func TestPostGoesWhereTheMuxRoutes(t *testing.T) {
	initialize := `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
	for _, tc := range []struct {
		path, post string
		status     int
		want       string
	}{
		{"/mcp", "/mcp", http.StatusOK, `"protocolVersion"`},
		{"/", "/", http.StatusOK, `"protocolVersion"`},
		{"/messages", "/messages", http.StatusNotFound, "open GET /sse first"},
	} {
		t.Run(tc.path, func(t *testing.T) {
			front, ts := newServedFront(t, `, "path": "`+tc.path+`"`, nil)
			if want := tc.path != "/messages"; front.postDirect != want {
				t.Errorf("postDirect %v, want %v", front.postDirect, want)
			}
			resp, err := ts.Client().Post(ts.URL+tc.post, "application/json", strings.NewReader(initialize))
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tc.status || !strings.Contains(string(body), tc.want) {
				t.Errorf("POST %s: %s %s, want %d with %q", tc.post, resp.Status, body, tc.status, tc.want)
			}
		})
	}
}

// The last Host found allowed is remembered (Front.allowedHost), and only
// that: a Host that is not allowed stays refused, before and after it.
func TestHostCheckRemembersOnlyTheAllowed(t *testing.T) {
	front, _ := newServedFront(t, "", nil)
	for i, tc := range []struct {
		host    string
		allowed bool
	}{
		{"evil.example", false}, {"127.0.0.1:8931", true}, {"evil.example", false}, {"127.0.0.1:8931", true},
		{"localhost", true}, {"evil.example:8931", false}, {"localhost", true}, {"127.0.0.1.evil.example", false},
	} {
		if got := front.hostAllowed(tc.host); got != tc.allowed {
			t.Errorf("check %d: Host %q allowed %v, want %v", i, tc.host, got, tc.allowed)
		}
	}
}
