package httpfront

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate/config"
	"github.com/mcpgate/mcpgate/proxy"
)

// newServedFront serves an HTTP front for a gateway whose one upstream,
// "greeter", is this test binary (see TestMain in example_test.go): tools
// hello (answers at once) and stuck (runs until cancelled), named as they
// are (namespace false).
func newServedFront(t testing.TB, extraConfig string, tune func(*Front)) (*Front, *httptest.Server) {
	t.Helper()
	self, _ := os.Executable()
	cfgJSON := fmt.Sprintf(`{"mcpServers": {"greeter": {"command": %q, "env": {"MCPGATE_EXAMPLE_SERVER": "1"}}}, "namespace": false %s}`, self, extraConfig)
	cfg, err := config.Load([]byte(cfgJSON), "mcpgate.json", os.LookupEnv)
	if err != nil {
		t.Fatal(err)
	}
	g, err := proxy.New(cfg, proxy.Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	g.Start()
	ts := httptest.NewUnstartedServer(nil)
	front := New(g, ts.Listener.Addr().String())
	if tune != nil {
		tune(front)
	}
	ts.Config.Handler = front
	ts.Start()
	t.Cleanup(func() {
		ts.CloseClientConnections()
		ts.Close()
		front.Close()
		g.Close()
	})
	return front, ts
}

const envelope = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`

// postModern POSTs a modern request with the headers the spec asks for.
func postModern(t *testing.T, ts *httptest.Server, method, name, body string, headers ...string) *http.Response {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, ts.URL+"/mcp", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", method)
	if name != "" {
		req.Header.Set("Mcp-Name", name)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := ts.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

func readAll(t *testing.T, resp *http.Response) string {
	t.Helper()
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(b))
}

// eventually waits, with a generous limit, for cond to hold: for state
// that changes when the server notices something (a client gone).
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("still not %s after 10s", what)
		}
		time.Sleep(time.Millisecond) // polling the server's state
	}
}

func (f *Front) openListens() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.listens
}

func (f *Front) statelessRunning() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.statelessInFlight
}

// A modern request is served without a session: none is made, and none is
// named in the answer, even when the request named one.
func TestModernRequestHasNoSession(t *testing.T) {
	f, ts := newServedFront(t, "", nil)
	resp := postModern(t, ts, "tools/call", "hello", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"hello",`+envelope+`}}`, "Mcp-Session-Id", "made-up")
	body := readAll(t, resp)
	if resp.StatusCode != http.StatusOK || !strings.Contains(body, "hello over HTTP") {
		t.Fatalf("got %s %s", resp.Status, body)
	}
	if got := resp.Header.Get("Mcp-Session-Id"); got != "" {
		t.Errorf("the answer names session %q", got)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type %q, want application/json", ct)
	}
	f.mu.Lock()
	n := len(f.sessions)
	f.mu.Unlock()
	if n != 0 {
		t.Errorf("%d sessions open after a modern request", n)
	}
}

// A listen's answer is an event stream from the start, unbuffered by
// proxies, with a comment when it is quiet; the client closing it cancels
// the listen, and its place (counted with the sessions) is freed.
func TestModernListenStream(t *testing.T) {
	f, ts := newServedFront(t, "", func(f *Front) { f.keepAlive = 20 * time.Millisecond })
	resp := postModern(t, ts, "subscriptions/listen", "", `{"jsonrpc":"2.0","id":"l1","method":"subscriptions/listen","params":{`+envelope+`,"notifications":{"toolsListChanged":true}}}`)
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "text/event-stream" || resp.Header.Get("X-Accel-Buffering") != "no" {
		t.Fatalf("got %s with headers %v, want an event stream with X-Accel-Buffering: no", resp.Status, resp.Header)
	}
	lines := bufio.NewScanner(resp.Body)
	var ack, keepAlive bool
	for lines.Scan() && !(ack && keepAlive) {
		line := lines.Text()
		ack = ack || strings.HasPrefix(line, "data: ") && strings.Contains(line, "notifications/subscriptions/acknowledged")
		keepAlive = keepAlive || ack && strings.HasPrefix(line, ":")
		if !ack && strings.HasPrefix(line, "data: ") {
			t.Fatalf("the first event is not the acknowledgement: %s", line)
		}
	}
	if !ack || !keepAlive {
		t.Fatalf("stream ended (%v) before the acknowledgement and a keep-alive comment", lines.Err())
	}
	if got := f.openListens(); got != 1 {
		t.Fatalf("%d listens counted, want 1", got)
	}
	resp.Body.Close()
	eventually(t, "released after the client closed the stream", func() bool { return f.openListens() == 0 })
}

// A listen holds a stream open as a legacy session's GET does, and counts
// against max_sessions with the sessions: past it, neither a session nor a
// listen is opened.
func TestModernListenCountsAsSession(t *testing.T) {
	f, ts := newServedFront(t, `, "max_sessions": 1`, nil)
	listen := `{"jsonrpc":"2.0","id":"l1","method":"subscriptions/listen","params":{` + envelope + `,"notifications":{"toolsListChanged":true}}}`
	resp := postModern(t, ts, "subscriptions/listen", "", listen)
	defer resp.Body.Close()
	bufio.NewReader(resp.Body).ReadString('\n') // the acknowledgement is on its way: the listen is open
	init := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
	r2, _ := ts.Client().Post(ts.URL+"/mcp", "application/json", strings.NewReader(init))
	if body := readAll(t, r2); r2.StatusCode != http.StatusServiceUnavailable {
		t.Errorf("initialize while a listen takes the one place: %s %s, want 503", r2.Status, body)
	}
	r3 := postModern(t, ts, "subscriptions/listen", "", strings.Replace(listen, `"l1"`, `"l2"`, 1))
	if body := readAll(t, r3); r3.StatusCode != http.StatusServiceUnavailable || r3.Header.Get("Retry-After") == "" ||
		!strings.Contains(body, `"id":"l2"`) || !strings.Contains(body, "max_sessions is 1") {
		t.Errorf("a second listen: %s %s, want 503 with Retry-After and a JSON-RPC error carrying its id", r3.Status, body)
	}
	resp.Body.Close()
	eventually(t, "released after the client closed the stream", func() bool { return f.openListens() == 0 })
	r4, _ := ts.Client().Post(ts.URL+"/mcp", "application/json", strings.NewReader(init))
	if body := readAll(t, r4); r4.StatusCode != http.StatusOK {
		t.Errorf("initialize once the listen is gone: %s %s", r4.Status, body)
	}
}

// Modern requests in flight are bounded: past the bound one is refused at
// once with 503, and a place comes back when a request ends (here, by its
// client closing it, which cancels it).
func TestModernRequestsBounded(t *testing.T) {
	f, ts := newServedFront(t, "", func(f *Front) { f.maxStateless = 1 })
	stuck := postModernAsync(t, ts, "tools/call", "stuck", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"stuck",`+envelope+`}}`)
	eventually(t, "running", func() bool { return f.statelessRunning() == 1 })
	resp := postModern(t, ts, "tools/call", "hello", `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"hello",`+envelope+`}}`)
	if body := readAll(t, resp); resp.StatusCode != http.StatusServiceUnavailable || !strings.Contains(body, `"id":2`) || resp.Header.Get("Retry-After") == "" {
		t.Errorf("past the bound: %s %s, want 503 with Retry-After and the request's id", resp.Status, body)
	}
	stuck()
	eventually(t, "released after the client closed the request", func() bool { return f.statelessRunning() == 0 })
	resp = postModern(t, ts, "tools/call", "hello", `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"hello",`+envelope+`}}`)
	if body := readAll(t, resp); resp.StatusCode != http.StatusOK {
		t.Errorf("once the first ended: %s %s", resp.Status, body)
	}
}

// postModernAsync sends a request whose answer does not come; the function
// returned closes it, as a client giving up does.
func postModernAsync(t *testing.T, ts *httptest.Server, method, name, body string, headers ...string) (cancel func()) {
	t.Helper()
	done := make(chan struct{})
	req, _ := http.NewRequest(http.MethodPost, ts.URL+"/mcp", strings.NewReader(body))
	ctx, stop := context.WithCancel(context.Background())
	req = req.WithContext(ctx)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("MCP-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", method)
	req.Header.Set("Mcp-Name", name)
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	go func() {
		defer close(done)
		if resp, err := ts.Client().Do(req); err == nil {
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
	}()
	return func() { stop(); <-done }
}

// Notifications from a modern client have nothing to do over HTTP (it
// cancels by closing a stream): accepted, with no body, whether or not
// they carry the envelope or Mcp-Method.
func TestModernNotificationsAccepted(t *testing.T) {
	_, ts := newServedFront(t, "", nil)
	for _, body := range []string{
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":9,` + envelope + `}}`,
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":9}}`,
	} {
		req, _ := http.NewRequest(http.MethodPost, ts.URL+"/mcp", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("MCP-Protocol-Version", "2026-07-28")
		resp, err := ts.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		if got := readAll(t, resp); resp.StatusCode != http.StatusAccepted || got != "" {
			t.Errorf("%s: got %s %q, want 202 and no body", body, resp.Status, got)
		}
	}
}

// A body may put line breaks between JSON tokens (a pretty-printed
// request); a stdio server reads one message per line, so the request must
// reach it as one line: whole, and with nothing after a break taken for a
// message of its own.
func TestBodyLineBreaksReachStdioServerWhole(t *testing.T) {
	_, ts := newServedFront(t, "", nil)
	modern := "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"hello\",\r\n\t\"arguments\":\n{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\",\"params\":{\"name\":\"smuggled\"}}\n,\n" + envelope + "\n}}"
	resp := postModern(t, ts, "tools/call", "hello", modern)
	if body := readAll(t, resp); resp.StatusCode != http.StatusOK || !strings.Contains(body, "hello over HTTP") {
		t.Errorf("modern: got %s %s", resp.Status, body)
	}
	init := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
	r, err := ts.Client().Post(ts.URL+"/mcp", "application/json", strings.NewReader(init))
	if err != nil {
		t.Fatal(err)
	}
	readAll(t, r)
	session := r.Header.Get("Mcp-Session-Id")
	req, _ := http.NewRequest(http.MethodPost, ts.URL+"/mcp", strings.NewReader("{\"jsonrpc\":\"2.0\",\"id\":2,\n\"method\":\"tools/call\",\n\"params\":{\"name\":\n\"hello\"}\n}"))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Mcp-Session-Id", session)
	r, err = ts.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if body := readAll(t, r); r.StatusCode != http.StatusOK || !strings.Contains(body, "hello over HTTP") {
		t.Errorf("legacy: got %s %s", r.Status, body)
	}
}

// The status of a modern request's error: the spec's for what the client
// must fix, 200 for what serving the request found.
func TestModernErrorStatus(t *testing.T) {
	for _, c := range []struct {
		answer string
		want   int
	}{
		{`{"jsonrpc":"2.0","id":1,"result":{}}`, 200},
		{`{"jsonrpc":"2.0","id":1,"result":{"isError":true,"content":[{"type":"text","text":"\"error\""}]}}`, 200},
		{`{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"unknown tool"}}`, 200},
		{`{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"boom"}}`, 200},
		{`{"jsonrpc":"2.0","id":1,"error":{"code":-32021,"message":"sampling required","data":{"requiredCapabilities":{"sampling":{}}}}}`, 400},
		{`{"jsonrpc":"2.0","id":1,"error":{"code":-32022,"message":"unsupported"}}`, 400},
	} {
		if got := servedStatus([]byte(c.answer)); got != c.want {
			t.Errorf("servedStatus(%s) = %d, want %d", c.answer, got, c.want)
		}
	}
}
