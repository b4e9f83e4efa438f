package proxy

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate/config"
	"github.com/mcpgate/mcpgate/jsonrpc"
)

// secretHeaders are what an operator configures for a server: one header
// net/http strips on a redirect to another host, one it does not.
var secretHeaders = map[string]string{"Authorization": "Bearer tok-secret", "X-Api-Key": "key-secret"}

// headerRecorder is a server that answers initialize and remembers the
// configured headers each request brought.
type headerRecorder struct {
	mu   sync.Mutex
	seen []string // per request: "path: Authorization=…, X-Api-Key=…"
}

func (h *headerRecorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h.mu.Lock()
	h.seen = append(h.seen, fmt.Sprintf("%s: Authorization=%q X-Api-Key=%q", r.URL.Path, r.Header.Get("Authorization"), r.Header.Get("X-Api-Key")))
	h.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	fmt.Fprint(w, `{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"b","version":"1"}}}`)
}

func (h *headerRecorder) requests() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.seen...)
}

func testLink(t *testing.T, s config.Server) *httpLink {
	t.Helper()
	l := newHTTPLink(s, 0, "test", slog.New(slog.DiscardHandler))
	t.Cleanup(func() { l.stop(time.Second) })
	return l
}

// initializeLink sends initialize over l and returns the answer.
func initializeLink(t *testing.T, l *httpLink) string {
	t.Helper()
	msg := (&jsonrpc.Message{ID: jsonrpc.IntID(1), Method: methodInitialize, Params: []byte(`{}`)}).Encode()
	if err := l.Write(context.Background(), msg); err != nil {
		t.Fatal(err)
	}
	got, err := l.Read()
	if err != nil {
		t.Fatal(err)
	}
	return string(got)
}

// A redirect to another origin (scheme, host and port) gets none of the
// configured headers; one to the same origin keeps them.
func TestRedirectKeepsHeadersOnOrigin(t *testing.T) {
	other := &headerRecorder{}
	b := httptest.NewServer(other)
	t.Cleanup(b.Close) // after the link's stop: cleanups run last first
	home := &headerRecorder{}
	mux := http.NewServeMux()
	mux.HandleFunc("/elsewhere", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, b.URL+"/mcp", http.StatusTemporaryRedirect)
	})
	mux.HandleFunc("/moved", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/mcp", http.StatusTemporaryRedirect)
	})
	mux.Handle("/mcp", home)
	a := httptest.NewServer(mux)
	t.Cleanup(a.Close)

	l := testLink(t, config.Server{Name: "remote", URL: a.URL + "/elsewhere", Headers: secretHeaders})
	if got := initializeLink(t, l); !strings.Contains(got, `"result"`) {
		t.Fatalf("initialize through a redirect: %s", got)
	}
	want := []string{`/mcp: Authorization="" X-Api-Key=""`}
	if got := other.requests(); !slices.Equal(got, want) {
		t.Errorf("the other origin got %q, want %q", got, want)
	}

	l = testLink(t, config.Server{Name: "remote", URL: a.URL + "/moved", Headers: secretHeaders})
	initializeLink(t, l)
	want = []string{`/mcp: Authorization="Bearer tok-secret" X-Api-Key="key-secret"`}
	if got := home.requests(); !slices.Equal(got, want) {
		t.Errorf("the same origin got %q, want %q", got, want)
	}
}

// A legacy HTTP+SSE server that names a POST endpoint on another origin is
// refused, with a reason that says so, and that origin gets nothing.
func TestLegacyEndpointOnOtherOriginRefused(t *testing.T) {
	other := &headerRecorder{}
	b := httptest.NewServer(other)
	t.Cleanup(b.Close) // after the link's stop: cleanups run last first
	a := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprintf(w, "event: endpoint\ndata: %s/messages?session=1\n\n", b.URL)
		w.(http.Flusher).Flush()
		<-r.Context().Done() // the link's stop ends it
	}))
	t.Cleanup(a.Close)

	l := testLink(t, config.Server{Name: "remote", Type: config.TypeSSE, URL: a.URL + "/sse", Headers: secretHeaders})
	msg := (&jsonrpc.Message{ID: jsonrpc.IntID(1), Method: methodInitialize, Params: []byte(`{}`)}).Encode()
	if err := l.Write(context.Background(), msg); err != nil {
		t.Fatal(err)
	}
	select {
	case <-l.gone():
	case <-time.After(20 * time.Second):
		t.Fatal("the link did not end")
	}
	reason := l.reason(0)
	if !strings.Contains(reason, "another origin ("+b.URL+"/messages)") || !strings.Contains(reason, "only to "+origin(mustParse(t, a.URL))) {
		t.Errorf("reason = %q, want it to name the other origin's endpoint and the configured origin", reason)
	}
	if strings.Contains(reason, "secret") {
		t.Errorf("reason %q echoes a configured header", reason)
	}
	if got := other.requests(); len(got) != 0 {
		t.Errorf("the other origin got %q, want nothing", got)
	}
}

func TestOrigin(t *testing.T) {
	for _, c := range []struct{ a, b string }{
		{"http://Example.com/mcp", "http://example.com:80/other?x=1"},
		{"https://example.com/", "https://example.com:443/sse"},
		{"http://[::1]:8080/a", "http://[::1]:8080/b"},
	} {
		if !sameOrigin(mustParse(t, c.a), mustParse(t, c.b)) {
			t.Errorf("%s and %s: not the same origin, want same", c.a, c.b)
		}
	}
	for _, c := range []struct{ a, b string }{
		{"http://example.com/mcp", "https://example.com/mcp"},
		{"http://example.com/mcp", "http://example.com:8080/mcp"},
		{"http://example.com/mcp", "http://api.example.com/mcp"},
		{"http://example.com/mcp", "http://example.com.evil.test/mcp"},
	} {
		if sameOrigin(mustParse(t, c.a), mustParse(t, c.b)) {
			t.Errorf("%s and %s: the same origin, want different", c.a, c.b)
		}
	}
}

func mustParse(t *testing.T, raw string) *url.URL {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	return u
}
