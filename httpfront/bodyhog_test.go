package httpfront

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/mcpgate/mcpgate/proxy"
)

// stalledBody is a request body that gives its first bytes and then
// blocks, as a client that announces a big body and sends almost none of
// it: reading tells started once it blocks, until released.
type stalledBody struct {
	first    string
	started  func()
	released <-chan struct{}
	once     sync.Once
}

func (b *stalledBody) Read(p []byte) (int, error) {
	if b.first != "" {
		n := copy(p, b.first)
		b.first = b.first[n:]
		return n, nil
	}
	b.once.Do(b.started)
	<-b.released
	return 0, io.ErrUnexpectedEOF
}

func (b *stalledBody) Close() error { return nil }

// Bodies that announce the largest message and send a byte hold the body
// budget only for what their buffers hold: what arrived, not what was
// announced. Counted as announced, sixteen idle connections (16 × 16 MiB,
// the whole 256 MiB) had every other client's POST refused with 503 for as
// long as they stalled, with no bytes sent to speak of.
func TestStalledBodiesDoNotHoldTheBudget(t *testing.T) {
	front, _ := newTestFront(t, proxy.Options{}, nil)
	limit := front.g.Config().MaxMessage
	hogs := int(front.bodies.max/int64(limit)) + 4 // more than the budget holds, counted as announced
	released := make(chan struct{})
	var stalled, done sync.WaitGroup
	stalled.Add(hogs)
	for range hogs {
		body := &stalledBody{first: `{`, started: stalled.Done, released: released}
		r := httptest.NewRequest(http.MethodPost, "/mcp", nil)
		r.Body, r.ContentLength = body, int64(limit)
		done.Go(func() {
			if _, ok := front.readBody(httptest.NewRecorder(), r); ok {
				t.Error("a stalled body was read whole")
			}
			body.once.Do(body.started) // refused before its read stalled
		})
	}
	stalled.Wait()

	r := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
	w := httptest.NewRecorder()
	body, ok := front.readBody(w, r)
	close(released)
	done.Wait()
	if !ok || string(body) != `{"jsonrpc":"2.0","id":1,"method":"ping"}` {
		t.Fatalf("with %d bodies stalled after a byte, a small POST got %d %s", hogs, w.Code, w.Body)
	}
	if in := front.bodies.inUse(); in != 0 {
		t.Errorf("%d bytes of the budget still taken once every read ended", in)
	}
}
