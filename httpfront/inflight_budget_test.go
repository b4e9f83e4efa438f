package httpfront

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// A legacy session's request keeps its body counted in the front's body
// budget while it runs, as a modern request's does (statelesspost.go):
// once read, a session's body is otherwise bounded only by its session
// (jsonrpc's 256 MiB of requests in flight), so max_sessions clients, or
// one client with many sessions, could have the gateway hold any amount
// of memory in calls to a slow tool. Probe 4: 200 calls of 1 MB held to a
// server that did not read took 600 MB of RSS in one session.
func TestSessionRequestsInFlightCountInBodyBudget(t *testing.T) {
	const size = 600 << 10
	f, ts := newServedFront(t, "", func(f *Front) { f.bodies.max = 2*size + size/2 }) // one held call (two copies) and half a body
	a, b := initialize(t, ts), initialize(t, ts)
	pad := strings.Repeat("x", size)
	stop := postSessionAsync(t, ts, a, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"stuck","arguments":{"pad":"`+pad+`"}}}`)
	defer stop()
	cancel := func() { // a legacy client cancels with a notification, not by leaving
		readAll(t, postSession(t, ts, a, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}`))
		stop()
	}
	eventually(t, "the call in flight", func() bool { return f.postsOpen(a) == 1 })

	resp := postSession(t, ts, b, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"hello","arguments":{"pad":"`+pad+`"}}}`)
	if body := readAll(t, resp); resp.StatusCode != http.StatusServiceUnavailable || !strings.Contains(body, `"error"`) {
		t.Errorf("a second body while the first's call runs, past the budget: %s %.200s; want 503 with a JSON-RPC error", resp.Status, body)
	}
	cancel()
	eventually(t, "the budget given back once the call ended", func() bool { return f.bodies.inUse() == 0 })
	resp = postSession(t, ts, b, `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"hello","arguments":{"pad":"`+pad+`"}}}`)
	if body := readAll(t, resp); resp.StatusCode != http.StatusOK {
		t.Errorf("once the first call ended: %s %.200s", resp.Status, body)
	}
}

// postSessionAsync POSTs a request of a legacy session whose answer does
// not come; the function returned closes it, as a client giving up does.
func postSessionAsync(t *testing.T, ts *httptest.Server, session, body string) (cancel func()) {
	t.Helper()
	done := make(chan struct{})
	ctx, stop := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, ts.URL+"/mcp", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set(headerSession, session)
	go func() {
		defer close(done)
		if resp, err := ts.Client().Do(req); err == nil {
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
	}()
	var once bool
	return func() {
		if !once {
			once = true
			stop()
			<-done
		}
	}
}

// postsOpen is how many POSTs of session id wait for their answers.
func (f *Front) postsOpen(id string) int {
	f.mu.Lock()
	hs := f.sessions[id]
	f.mu.Unlock()
	if hs == nil {
		return 0
	}
	hs.stream.mu.Lock()
	defer hs.stream.mu.Unlock()
	return len(hs.stream.posts)
}

// A request held while it runs counts twice its body in the budget: its
// body and the copy written to the server are both in memory (probe 6: 16
// calls of 15 MiB held 480 MB against 240 counted). With room for two
// bodies and one call of one body held, a second body does not fit.
func TestHeldRequestCountsItsTwoCopies(t *testing.T) {
	const size = 600 << 10
	f, ts := newServedFront(t, "", func(f *Front) { f.bodies.max = 2*size + size/2 })
	a, b := initialize(t, ts), initialize(t, ts)
	pad := strings.Repeat("x", size)
	stop := postSessionAsync(t, ts, a, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"stuck","arguments":{"pad":"`+pad+`"}}}`)
	defer func() {
		readAll(t, postSession(t, ts, a, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}`))
		stop()
	}()
	// The POST opens before its body is counted held (serveSessionPost):
	// both are waited for, or a busy machine sees the moment between (it
	// counted 0 bytes then).
	eventually(t, "a call in flight counting at least twice its body held", func() bool { return f.postsOpen(a) == 1 && f.bodies.inUse() >= 2*size })
	resp := postSession(t, ts, b, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"hello","arguments":{"pad":"`+pad+`"}}}`)
	if body := readAll(t, resp); resp.StatusCode != http.StatusServiceUnavailable {
		t.Errorf("a second body past what the held call takes in memory: %s %.200s; want 503", resp.Status, body)
	}
}
