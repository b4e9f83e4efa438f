package proxy

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate/config"
	"github.com/mcpgate/mcpgate/jsonrpc"
)

// The server's retry time is kept within bounds: none means "decide
// yourself" (-1), 0 is no busy loop, a huge one neither overflows nor
// waits past maxRetry.
func TestRetryWait(t *testing.T) {
	for _, c := range []struct {
		retry int
		want  time.Duration
	}{
		{-1, -1},
		{0, minRetry},
		{500, 500 * time.Millisecond},
		{3_600_000, maxRetry},
		{math.MaxInt, maxRetry},
	} {
		if got := retryWait(streamPos{retry: c.retry}); got != c.want {
			t.Errorf("retry %d: wait %v, want %v", c.retry, got, c.want)
		}
	}
}

// primingServer answers a POSTed request with an event stream that it
// closes after a priming event; resumeGet serves every GET.
func primingServer(t *testing.T, resumeGet http.HandlerFunc) *httptest.Server {
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			resumeGet(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, "id: p-0\nretry: 0\ndata: \n\n")
	}))
	t.Cleanup(s.Close) // after the link's stop: cleanups run last first
	return s
}

func callTool(t *testing.T, l *httpLink, id int64) {
	t.Helper()
	msg := (&jsonrpc.Message{ID: jsonrpc.IntID(id), Method: methodToolsCall, Params: []byte(`{"name":"t"}`)}).Encode()
	if err := l.Write(context.Background(), msg); err != nil {
		t.Fatal(err)
	}
}

// A stream whose resumptions bring nothing new is given up after
// maxResumeFailures attempts in a row, with a reason.
func TestResumeGivesUp(t *testing.T) {
	var mu sync.Mutex
	gets := 0
	s := primingServer(t, func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		gets++
		mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream") // and nothing in it
	})
	l := testLink(t, config.Server{Name: "remote", URL: s.URL})
	l.openGate() // no handshake here
	callTool(t, l, 7)
	got, err := l.Read()
	if err != nil {
		t.Fatal(err)
	}
	if want := `upstream \"remote\": its event stream for tools/call ended without an answer, and resuming it failed: the stream resumed from \"p-0\" ended again with no new event (gave up after 5 attempts in a row)`; !strings.Contains(string(got), want) {
		t.Errorf("answer = %s, want an error with %s", got, want)
	}
	mu.Lock()
	defer mu.Unlock()
	if gets != maxResumeFailures {
		t.Errorf("%d GETs, want %d", gets, maxResumeFailures)
	}
}

// Once the gateway gives up on a request (notifications/cancelled), the
// wait for its resumed stream ends too.
func TestResumeEndsWithRequest(t *testing.T) {
	waiting, left := make(chan struct{}), make(chan struct{})
	s := primingServer(t, func(w http.ResponseWriter, r *http.Request) {
		close(waiting)
		<-r.Context().Done() // a resumed stream that never answers
		close(left)
	})
	l := testLink(t, config.Server{Name: "remote", URL: s.URL})
	l.openGate()
	callTool(t, l, 7)
	waitFor(t, waiting, "the resuming GET")
	if err := l.Write(context.Background(), (&jsonrpc.Message{Method: notifyCancelled, Params: []byte(`{"requestId":7}`)}).Encode()); err != nil {
		t.Fatal(err)
	}
	waitFor(t, left, "the resuming GET to end")
}

func waitFor(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(20 * time.Second):
		t.Fatalf("timed out waiting for %s", what)
	}
}
