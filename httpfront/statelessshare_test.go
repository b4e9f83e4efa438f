package httpfront

import (
	"net/http"
	"strings"
	"testing"
)

// With several tokens, one token may have at most a quarter of the modern
// requests in flight that mcpgate serves at once: past its share its next
// is refused (503 naming the limit) while another token's is served, and
// a place comes back when one of its requests ends.
func TestModernRequestsPerClientShare(t *testing.T) {
	tokens := `, "auth": {"tokens": ["aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"]}`
	f, ts := newServedFront(t, tokens, func(f *Front) { f.maxStateless = 8 })
	bearerA := []string{"Authorization", "Bearer aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"}
	bearerB := []string{"Authorization", "Bearer bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"}
	call := func(id, name string) string {
		return `{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{"name":"` + name + `",` + envelope + `}}`
	}
	var stuck []func()
	for i := range 2 { // a quarter of 8
		stuck = append(stuck, postModernAsync(t, ts, "tools/call", "stuck", call(string(rune('1'+i)), "stuck"), bearerA...))
	}
	eventually(t, "both running", func() bool { return f.statelessRunning() == 2 })
	resp := postModern(t, ts, "tools/call", "hello", call("3", "hello"), bearerA...)
	if body := readAll(t, resp); resp.StatusCode != http.StatusServiceUnavailable || !strings.Contains(body, `"id":3`) ||
		!strings.Contains(body, "this client has 2 requests in flight") || resp.Header.Get("Retry-After") == "" {
		t.Errorf("token A past its share: %s %s, want 503 naming the per-client limit", resp.Status, body)
	}
	resp = postModern(t, ts, "tools/call", "hello", call("4", "hello"), bearerB...)
	if body := readAll(t, resp); resp.StatusCode != http.StatusOK {
		t.Errorf("token B while A holds its share: %s %s, want 200", resp.Status, body)
	}
	stuck[0]()
	eventually(t, "released after the client closed the request", func() bool { return f.statelessRunning() == 1 })
	resp = postModern(t, ts, "tools/call", "hello", call("5", "hello"), bearerA...)
	if body := readAll(t, resp); resp.StatusCode != http.StatusOK {
		t.Errorf("token A once one of its requests ended: %s %s, want 200", resp.Status, body)
	}
	stuck[1]()
}
