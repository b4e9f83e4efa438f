package proxy

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate/config"
	"github.com/mcpgate/mcpgate/jsonrpc"
)

// holdingServer holds every POST of one method open without an answer
// (until released, or the client gives up on it), answers other
// notifications with 202 and requests at once, and counts what it got.
type holdingServer struct {
	hold    string
	release chan struct{} // closed: held POSTs are answered, and no more are held
	full    chan struct{} // closed once fullAt POSTs are held at once
	fullAt  int
	once    sync.Once

	mu      sync.Mutex
	wasFull bool
	held    int
	maxHeld int
	posts   map[string]int // by method
}

func newHoldingServer(t *testing.T, hold string, fullAt int) (*holdingServer, string) {
	h := &holdingServer{hold: hold, release: make(chan struct{}), full: make(chan struct{}), fullAt: fullAt, posts: map[string]int{}}
	s := httptest.NewServer(h)
	t.Cleanup(s.Close) // after the link's stop: cleanups run last first
	t.Cleanup(h.releaseAll)
	return h, s.URL
}

func (h *holdingServer) releaseAll() { h.once.Do(func() { close(h.release) }) }

func (h *holdingServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.WriteHeader(http.StatusMethodNotAllowed) // no GET stream
		return
	}
	body, _ := io.ReadAll(r.Body)
	m, err := jsonrpc.Decode(body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	h.mu.Lock()
	h.posts[m.Method]++
	h.mu.Unlock()
	switch {
	case m.Method == h.hold:
		h.mu.Lock()
		h.held++
		h.maxHeld = max(h.maxHeld, h.held)
		if h.held == h.fullAt && !h.wasFull {
			h.wasFull = true // held may come back to fullAt later: close once
			close(h.full)
		}
		h.mu.Unlock()
		select {
		case <-h.release:
		case <-r.Context().Done():
		}
		h.mu.Lock()
		h.held--
		h.mu.Unlock()
		if m.IsNotification() {
			w.WriteHeader(http.StatusAccepted)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{}}`, m.ID)
	case m.IsNotification():
		w.WriteHeader(http.StatusAccepted)
	default:
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{}}`, m.ID)
	}
}

func (h *holdingServer) count(method string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.posts[method]
}

func cancellation(i int) []byte {
	return (&jsonrpc.Message{Method: notifyCancelled, Params: mustJSON(map[string]any{"requestId": fmt.Sprintf("gone-%d", i), "reason": "mcpgate timeout"})}).Encode()
}

// awaitAnswer writes a request through q and waits for the link's answer.
func awaitAnswer(t *testing.T, q *outbox, l *httpLink, id int64) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := q.Write(ctx, (&jsonrpc.Message{ID: jsonrpc.IntID(id), Method: methodPing}).Encode()); err != nil {
		t.Fatal(err)
	}
	answer := make(chan []byte, 1)
	go func() {
		got, _ := l.Read()
		answer <- got
	}()
	select {
	case got := <-answer:
		if m, err := jsonrpc.Decode(got); err != nil || m.ID != jsonrpc.IntID(id) || m.Error != nil {
			t.Fatalf("answer %s, want a result for %d", got, id)
		}
	case <-ctx.Done():
		t.Fatal("no answer to the request queued behind the others")
	}
}

// Notifications to a server that never answers their POSTs cost a bounded
// number of POSTs and goroutines: the link has at most maxPOSTs POSTs open,
// each such POST ends after the server's timeout, and what waits, waits in
// the outbox. A request queued behind thousands of them is still answered.
func TestHTTPLinkBoundsPOSTs(t *testing.T) {
	srv, url := newHoldingServer(t, notifyCancelled, -1)
	// The timeout ends the held POSTs of notifications in a few rounds; the
	// request at the end lives up to max_timeout, as long as a loaded
	// machine may take to get it through (with 400 ms it failed under -race
	// on a busy machine: its POST's life ran out, and nothing answered it).
	l := testLink(t, config.Server{Name: "remote", URL: url, Timeout: 400 * time.Millisecond, MaxTimeout: time.Minute})
	l.openGate() // no handshake here
	q := newOutbox(l, upstreamQueueBytes, false, time.Second, nil)
	t.Cleanup(func() { q.Close() })
	before := runtime.NumGoroutine()

	const n = 4 * maxPOSTs // unbounded, as many POSTs would cost ~5n goroutines
	for i := range n {
		if err := q.Write(context.Background(), cancellation(i)); err != nil {
			t.Fatal(err)
		}
	}
	awaitAnswer(t, q, l, 1)

	// Each open POST costs the link one goroutine, the transport two and the
	// server two; all n of them would be thousands more.
	grown := runtime.NumGoroutine() - before
	t.Logf("%d notifications: %d more goroutines at the answer", n, grown)
	if grown > 12*maxPOSTs {
		t.Errorf("%d more goroutines once the request was answered; want at most %d for %d POSTs open at most", grown, 12*maxPOSTs, maxPOSTs)
	}
	srv.mu.Lock()
	defer srv.mu.Unlock()
	t.Logf("at most %d POSTs open at once", srv.maxHeld)
	// The server may see a POST end a little after the link has reused its place.
	if srv.maxHeld > 2*maxPOSTs {
		t.Errorf("the server had %d POSTs open at once, want at most %d", srv.maxHeld, maxPOSTs)
	}
}

// While the link has all its POSTs open, the outbox fills instead: a flood
// of roots/list_changed then costs one message, not one POST each.
func TestHTTPLinkCoalescesWhileBusy(t *testing.T) {
	srv, url := newHoldingServer(t, notifyCancelled, maxPOSTs)
	l := testLink(t, config.Server{Name: "remote", URL: url, Timeout: time.Hour})
	l.openGate()
	q := newOutbox(l, upstreamQueueBytes, false, time.Second, nil)
	t.Cleanup(func() { q.Close() })

	for i := range maxPOSTs + 10 {
		q.offer(cancellation(i), jsonrpc.ID{})
	}
	waitFor(t, srv.full, fmt.Sprintf("%d POSTs held open", maxPOSTs))
	changed := (&jsonrpc.Message{Method: notifyRootsChanged}).Encode()
	for range 10000 {
		q.offerOnce(changed)
		runtime.Gosched() // a flood over time, not in one burst: the writer gets its turns
	}
	srv.releaseAll()
	awaitAnswer(t, q, l, 1) // everything queued before it was sent

	if got := srv.count(notifyRootsChanged); got > 2 {
		t.Errorf("%d POSTs of %s for one flood, want one", got, notifyRootsChanged)
	}
}

// A request the gateway gives up on frees its place among maxPOSTs at once:
// its cancellation may wait in the outbox behind a message that waits for
// that very place.
func TestHTTPLinkAbandonFreesPlace(t *testing.T) {
	srv, url := newHoldingServer(t, methodToolsCall, maxPOSTs)
	l := testLink(t, config.Server{Name: "remote", URL: url, Timeout: time.Hour})
	l.openGate()
	q := newOutbox(l, upstreamQueueBytes, false, time.Second, nil)
	t.Cleanup(func() { q.Close() })

	for i := range maxPOSTs {
		msg := (&jsonrpc.Message{ID: jsonrpc.IntID(int64(100 + i)), Method: methodToolsCall, Params: []byte(`{"name":"slow"}`)}).Encode()
		if err := q.Write(context.Background(), msg); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, srv.full, fmt.Sprintf("%d calls held open", maxPOSTs))
	// One more call: the outbox's writer waits for a place with it.
	if err := q.Write(context.Background(), (&jsonrpc.Message{ID: jsonrpc.IntID(99), Method: methodToolsCall, Params: []byte(`{"name":"slow"}`)}).Encode()); err != nil {
		t.Fatal(err)
	}
	w := &wire{out: q, link: l}
	u := &upstream{name: "remote"}
	for i := range maxPOSTs {
		u.sendCancel(w, jsonrpc.IntID(int64(100+i)), "mcpgate timeout")
	}
	awaitAnswer(t, q, l, 1)
}
