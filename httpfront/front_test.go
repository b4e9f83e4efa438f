package httpfront

import (
	"bufio"
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mcpgate/mcpgate/config"
	"github.com/mcpgate/mcpgate/proxy"
)

// newTestFront serves an HTTP front for a gateway whose one upstream is
// never started: enough for what the front does before a request reaches
// the gateway.
func newTestFront(t *testing.T, opts proxy.Options, tune func(*Front)) (*Front, *httptest.Server) {
	t.Helper()
	return newTestFrontServer(t, opts, tune, nil)
}

// newTestFrontServer is newTestFront with tuneServer, if not nil, given
// the front and its http.Server before it starts.
func newTestFrontServer(t *testing.T, opts proxy.Options, tune func(*Front), tuneServer func(*Front, *http.Server)) (*Front, *httptest.Server) {
	t.Helper()
	cfg := &config.Config{Servers: []config.Server{{Name: "idle", Type: config.TypeStdio, Command: "unused"}}}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	g, err := proxy.New(cfg, opts)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewUnstartedServer(nil)
	front := New(g, ts.Listener.Addr().String())
	if tune != nil {
		tune(front)
	}
	ts.Config.Handler = front
	if tuneServer != nil {
		tuneServer(front, ts.Config)
	}
	ts.Start()
	t.Cleanup(func() {
		ts.CloseClientConnections() // a connection the test left stuck must not hang Close
		ts.Close()
		front.Close()
		g.Close()
	})
	return front, ts
}

// A request whose body stalls after the headers is answered and its
// connection closed once the body deadline passes, whatever the path: the
// server must not go on waiting for the rest of the body (issue 8, item 15).
func TestBodyStallClosesConnection(t *testing.T) {
	_, ts := newTestFront(t, proxy.Options{}, func(f *Front) { f.bodyTimeout = 50 * time.Millisecond })
	for _, target := range []string{"POST /mcp", "POST /messages?sessionId=none", "DELETE /mcp", "GET /healthz"} {
		t.Run(target, func(t *testing.T) {
			conn, err := net.Dial("tcp", ts.Listener.Addr().String())
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			io.WriteString(conn, target+" HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: 100\r\n\r\n{\"jsonrpc\":")
			// A generous limit for the event (the server closing the
			// connection); the body deadline itself is short.
			conn.SetReadDeadline(time.Now().Add(20 * time.Second))
			resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
			if err != nil {
				t.Fatalf("no answer: %v", err)
			}
			io.Copy(io.Discard, resp.Body)
			if _, err := conn.Read(make([]byte, 1)); err != io.EOF {
				t.Fatalf("the connection was not closed after the answer (%s): %v", resp.Status, err)
			}
		})
	}
}

// A body that came in whole lifts the deadline: an answer that comes later
// than it is still delivered.
func TestBodyDeadlineLiftedForTheAnswer(t *testing.T) {
	// initialize waits StartupWait for the upstreams, which never start.
	_, ts := newTestFront(t, proxy.Options{StartupWait: 300 * time.Millisecond}, func(f *Front) { f.bodyTimeout = 50 * time.Millisecond })
	body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
	req, _ := http.NewRequest(http.MethodPost, ts.URL+"/mcp", strings.NewReader(body))
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := ts.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	got, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(got), `"protocolVersion"`) {
		t.Fatalf("got %s %s, want the initialize result", resp.Status, got)
	}
}

// initialize opens a session on ts and returns its id.
func initialize(t *testing.T, ts *httptest.Server) string {
	t.Helper()
	body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
	req, _ := http.NewRequest(http.MethodPost, ts.URL+"/mcp", strings.NewReader(body))
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := ts.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	id := resp.Header.Get(headerSession)
	if resp.StatusCode != http.StatusOK || id == "" {
		t.Fatalf("initialize: %s, session %q", resp.Status, id)
	}
	return id
}

// A GET stream that the client stops reading ends at the write deadline,
// and what the session sends next is kept for the next stream instead of
// waiting forever (issue 8, item 7).
func TestUnreadStreamEnds(t *testing.T) {
	front, ts := newTestFront(t, proxy.Options{StartupWait: time.Millisecond}, func(f *Front) { f.writeTimeout = 100 * time.Millisecond })
	id := initialize(t, ts)
	conn, err := net.Dial("tcp", ts.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	io.WriteString(conn, "GET /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\nMcp-Session-Id: "+id+"\r\n\r\n")
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET: %v %v", resp, err)
	}
	// From here on the client reads nothing.
	front.mu.Lock()
	st := front.sessions[id].stream
	front.mu.Unlock()
	msg := []byte(`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"` + strings.Repeat("x", 1<<20) + `"}}`)
	gone := make(chan struct{})
	go func() {
		defer close(gone)
		for st.streamOpen() {
			if st.Write(context.Background(), msg) != nil {
				return
			}
		}
	}()
	select {
	case <-gone:
	case <-time.After(20 * time.Second): // a generous limit for the event
		t.Fatal("the stream nobody reads is still open")
	}
}

// A session unused for session_idle (no request, no open stream) expires:
// clients often never send DELETE. One in use does not, however long.
func TestIdleSessionExpires(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cfg := &config.Config{
			Servers: []config.Server{{Name: "idle", Type: config.TypeStdio, Command: "unused"}},
			HTTP:    config.HTTP{SessionIdle: time.Minute},
		}
		g, err := proxy.New(cfg, proxy.Options{Logger: slog.New(slog.DiscardHandler)})
		if err != nil {
			t.Fatal(err)
		}
		f := New(g, "127.0.0.1:0")
		idle, err := f.newSession(httptest.NewRequest("POST", "/mcp", nil), false)
		if err != nil {
			t.Fatal(err)
		}
		busy, err := f.newSession(httptest.NewRequest("POST", "/mcp", nil), false)
		if err != nil {
			t.Fatal(err)
		}
		busy.use(1) // a request in flight, or an open stream
		has := func(hs *httpSession) bool {
			f.mu.Lock()
			defer f.mu.Unlock()
			return f.sessions[hs.id] == hs
		}
		time.Sleep(50 * time.Second)
		synctest.Wait()
		if !has(idle) {
			t.Fatal("a session idle for 50s expired; session_idle is 1m")
		}
		time.Sleep(40 * time.Second) // idle 90s: past session_idle and a janitor round
		synctest.Wait()
		if has(idle) {
			t.Fatal("a session idle for 90s is still open; session_idle is 1m")
		}
		if !has(busy) {
			t.Fatal("a session in use expired")
		}
		busy.use(-1)
		f.Close()
		g.Close()
	})
}

// A session past session_idle is gone when a request names it, and takes
// no place from a new session, however late the janitor comes by (on a
// loaded machine it ran after the script's next request: http_sessions).
func TestExpiredSessionGoneBeforeTheJanitor(t *testing.T) {
	cfg := &config.Config{
		Servers: []config.Server{{Name: "idle", Type: config.TypeStdio, Command: "unused"}},
		HTTP:    config.HTTP{SessionIdle: time.Hour, MaxSessions: 1},
	}
	g, err := proxy.New(cfg, proxy.Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	f := New(g, "127.0.0.1:0")
	defer g.Close()
	defer f.Close()
	old, err := f.newSession(httptest.NewRequest("POST", "/mcp", nil), false)
	if err != nil {
		t.Fatal(err)
	}
	old.mu.Lock()
	old.lastUsed = time.Now().Add(-2 * time.Hour) // the janitor's next round is 15 minutes away
	old.mu.Unlock()

	// A new session first: it must not be refused for the expired one.
	fresh, err := f.newSession(httptest.NewRequest("POST", "/mcp", nil), false)
	if err != nil {
		t.Fatalf("with max_sessions 1 and the one session expired, a new one was refused: %v", err)
	}
	// Then a request naming a session past its idle time, before the janitor.
	fresh.mu.Lock()
	fresh.lastUsed = time.Now().Add(-2 * time.Hour)
	fresh.mu.Unlock()
	r := httptest.NewRequest("POST", "/mcp", nil)
	r.Header.Set(headerSession, fresh.id)
	if hs, status, _ := f.lookup(r); hs != nil || status != http.StatusNotFound {
		t.Fatalf("a session idle for 2h (session_idle 1h) was found: status %d", status)
	}
}
