package httpfront

import (
	"io"
	"net/http"
	"strings"
	"testing"
)

// A modern tools/call over HTTP that goes inline is served without a
// session (proxy/statelesscall.go): what that takes is counted here, so
// that it does not creep back. The count is the whole process's (the
// net/http client's share, about 45, included; the server is a child
// process), so the bound is loose; before the stateless session's release and
// status check stopped escaping and its envelope was split on the stack,
// a call took 207 (199 after); 151 since it goes inline (TryWriteAnswer,
// proxy/moderninline.go), as a plain call, and its session's end waits on
// no timer; 119 since it takes no session at all, 115 since its
// params' split fits the body's and its envelope's copy for the server a
// pooled buffer (a legacy call: 105).
func TestModernToolCallHTTPAllocations(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a server")
	}
	_, ts := newServedFront(t, "", nil)
	client := ts.Client()
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"hello","arguments":{"text":"hi"},` + envelope + `}}`
	call := func() {
		req, _ := http.NewRequest(http.MethodPost, ts.URL+"/mcp", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("MCP-Protocol-Version", "2026-07-28")
		req.Header.Set("Mcp-Method", "tools/call")
		req.Header.Set("Mcp-Name", "hello")
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		answer, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || !strings.Contains(string(answer), "hello over HTTP") {
			t.Fatalf("%s %s", resp.Status, answer)
		}
	}
	for range 50 { // connections made, pools filled
		call()
	}
	allocs := testing.AllocsPerRun(300, call)
	t.Logf("%.1f allocations per modern tools/call over HTTP (client and gateway)", allocs)
	if want := maxModernCallAllocs(); allocs > want {
		t.Errorf("a modern tools/call over HTTP takes %.0f allocations (client side included), want at most %.0f", allocs, want)
	}
}
