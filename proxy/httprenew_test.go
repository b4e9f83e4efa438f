package proxy

import (
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mcpgate/mcpgate/config"
	"github.com/mcpgate/mcpgate/jsonrpc"
)

// handlerTransport serves a link's requests in memory, inside a synctest
// bubble: a handler blocked on a channel is durably blocked, as a real
// server's would not be.
type handlerTransport struct{ h http.Handler }

func (t handlerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	rec := httptest.NewRecorder()
	t.h.ServeHTTP(rec, r)
	resp := rec.Result()
	resp.Request = r
	return resp, nil
}

// forgetfulServer is a Streamable HTTP server that can forget its session
// (a restart): it answers an unknown session with 404, a missing one with
// 400, and holds every initialize after the first until released.
type forgetfulServer struct {
	release chan struct{}

	mu       sync.Mutex
	session  string // the one it knows; "" once forgotten
	inits    int
	rejected []string // requests that came without a session
}

func (s *forgetfulServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.WriteHeader(http.StatusMethodNotAllowed)
		return
	}
	body, _ := io.ReadAll(r.Body)
	m, err := jsonrpc.Decode(body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	got := r.Header.Get(headerSession)
	s.mu.Lock()
	switch {
	case m.Method == methodInitialize:
		s.inits++
		n := s.inits
		s.mu.Unlock()
		if n > 1 {
			<-s.release
		}
		s.mu.Lock()
		s.session = fmt.Sprintf("session-%d", n)
		w.Header().Set(headerSession, s.session)
		s.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"f","version":"1"}}}`, m.ID)
		return
	case got == "":
		s.rejected = append(s.rejected, m.Method)
		s.mu.Unlock()
		http.Error(w, "missing session", http.StatusBadRequest)
		return
	case got != s.session:
		s.mu.Unlock()
		http.Error(w, "unknown session", http.StatusNotFound)
		return
	}
	s.mu.Unlock()
	if m.IsNotification() {
		w.WriteHeader(http.StatusAccepted)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"content":[]}}`, m.ID)
}

func (s *forgetfulServer) forget() {
	s.mu.Lock()
	s.session = ""
	s.mu.Unlock()
}

// Requests that find the server forgot our session share one new session,
// and a request made while it is being started waits for it: every one is
// answered, and none goes out without a session.
func TestRenewSessionShared(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := &forgetfulServer{release: make(chan struct{})}
		l := newHTTPLink(config.Server{Name: "remote", URL: "http://remote.test/mcp"}, 0, "test", slog.New(slog.DiscardHandler))
		l.client.Transport = handlerTransport{srv}
		defer l.stop(time.Second)
		if got := initializeLink(t, l); !strings.Contains(got, `"result"`) {
			t.Fatalf("initialize answered %s", got)
		}
		l.openGate() // no GET stream here

		srv.forget()
		callTool(t, l, 2)
		callTool(t, l, 3)
		synctest.Wait() // both met the forgotten session; the new one is on its way
		callTool(t, l, 4)
		synctest.Wait()
		close(srv.release)

		answered := map[string]bool{}
		for range 3 {
			got, err := l.Read()
			if err != nil {
				t.Fatal(err)
			}
			m, err := jsonrpc.Decode(got)
			if err != nil || m.Error != nil {
				t.Errorf("answer %s, want a result", got)
				continue
			}
			answered[m.ID.String()] = true
		}
		if len(answered) != 3 {
			t.Errorf("answered %v, want 2, 3 and 4", answered)
		}
		srv.mu.Lock()
		defer srv.mu.Unlock()
		if len(srv.rejected) > 0 {
			t.Errorf("sent without a session: %v", srv.rejected)
		}
		if srv.inits != 2 {
			t.Errorf("%d initializes, want 2 (the first, and one shared new session)", srv.inits)
		}
	})
}
