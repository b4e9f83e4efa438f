package httpfront

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate/jsonrpc"
)

// directServe serves one POSTed request on a session stream whose
// connection serves messages directly (jsonrpc.DirectStream), its handler
// being handle: what a handler writes goes to the stream as the session's
// outbox would write it. It returns the response as the client saw it (none
// when ctx ended first).
func directServe(t *testing.T, handle func(st *httpStream, id jsonrpc.ID), ctx context.Context) (*http.Response, string) {
	t.Helper()
	st := newHTTPStream("s", false, slog.New(slog.DiscardHandler), time.Minute)
	t.Cleanup(st.end)
	ranHere := false
	st.ServeDirect(func(msg *jsonrpc.Message, raw []byte, here bool) func() {
		if !here {
			t.Errorf("the request's handler was not left to the POST's goroutine")
		}
		return func() { ranHere = true; handle(st, msg.ID) }
	})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		msg := &jsonrpc.Message{ID: jsonrpc.IntID(7), Method: "tools/call"}
		post, err := st.openPost(msg.ID, true)
		if err != nil {
			t.Error(err)
			return
		}
		defer st.closePost(msg.ID, post)
		post.serve(w, r, msg)
		if !ranHere {
			t.Error("the POST was answered before its handler ran on its goroutine")
		}
	}))
	t.Cleanup(srv.Close)
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL, strings.NewReader("{}"))
	resp, err := srv.Client().Do(req)
	if err != nil {
		if ctx.Err() == nil {
			t.Error(err)
		}
		return nil, "" // the client left, as the test meant it to
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp, string(body)
}

const directAnswer = `{"jsonrpc":"2.0","id":7,"result":{}}`

// A request served on its POST's goroutine is answered with JSON there,
// when nothing comes before its answer.
func TestDirectAnswerIsJSON(t *testing.T) {
	resp, body := directServe(t, func(st *httpStream, id jsonrpc.ID) {
		st.WriteRelated(context.Background(), []byte(directAnswer), id, true)
	}, context.Background())
	if ct := resp.Header.Get("Content-Type"); ct != "application/json" || body != directAnswer {
		t.Errorf("got %s %q, want the answer as JSON", ct, body)
	}
}

// What comes before the answer while the handler runs on the POST's
// goroutine (a progress notification) goes out at once, as an event, and
// the answer follows it on the same event stream.
func TestDirectProgressStreams(t *testing.T) {
	progress := `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":1}}`
	resp, body := directServe(t, func(st *httpStream, id jsonrpc.ID) {
		// From another goroutine, as the upstream's reader relays it,
		// and waited for: it must not need the handler to return.
		done := make(chan struct{})
		go func() {
			defer close(done)
			st.WriteNotification([]byte(progress), id)
		}()
		<-done
		st.WriteRelated(context.Background(), []byte(directAnswer), id, true)
	}, context.Background())
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("Content-Type %s, want an event stream", ct)
	}
	p, a := strings.Index(body, progress), strings.Index(body, directAnswer)
	if p < 0 || a < p {
		t.Errorf("want the progress, then the answer, in\n%s", body)
	}
}

// An answer that comes after the handler returned (queued behind another
// message, written by whoever drains the queue) still reaches the POST.
func TestDirectAnswerAfterHandler(t *testing.T) {
	resp, body := directServe(t, func(st *httpStream, id jsonrpc.ID) {
		go func() {
			// Once the POST waits as usual: its goroutine left the handler.
			for {
				st.mu.Lock()
				p := st.posts[id]
				st.mu.Unlock()
				p.direct.mu.Lock()
				running := p.direct.running
				p.direct.mu.Unlock()
				if !running {
					break
				}
				time.Sleep(time.Millisecond) // polling for the event, not timing it
			}
			st.WriteRelated(context.Background(), []byte(directAnswer), id, true)
		}()
	}, context.Background())
	if resp.StatusCode != http.StatusOK || body != directAnswer {
		t.Errorf("got %s %q, want the answer", resp.Status, body)
	}
}

// A client that leaves while its answer streams does not hold up the
// handler: what the session writes for the POST later is dropped, not
// waited for.
func TestDirectClientGoneDoesNotBlock(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	written := make(chan struct{})
	go func() {
		defer close(written)
		directServe(t, func(st *httpStream, id jsonrpc.ID) {
			st.WriteNotification([]byte(`{"jsonrpc":"2.0","method":"notifications/progress","params":{}}`), id)
			cancel() // the client leaves
			// The helper streaming the POST sees it and ends; the
			// answer must then be dropped, not wait for a reader.
			for {
				st.mu.Lock()
				p := st.posts[id]
				st.mu.Unlock()
				select {
				case <-p.gone:
					st.WriteRelated(context.Background(), []byte(directAnswer), id, true)
					return
				case <-time.After(time.Millisecond): // polling for the event
				}
			}
		}, ctx)
	}()
	select {
	case <-written:
	case <-time.After(30 * time.Second):
		t.Fatal("the answer for a POST whose client left waited for a reader")
	}
}
