package httpfront

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate/jsonrpc"
)

// An answer is reported taken only when its POST will write it: once the
// POST has left (its client went away), an answer that comes is reported
// not taken, and the response holds nothing of it.
func TestPostAnswerAfterThePostLeftIsNotTaken(t *testing.T) {
	st := newHTTPStream("s", false, slog.New(slog.DiscardHandler), time.Minute)
	defer st.end()
	id := jsonrpc.IntID(7)
	post, err := st.openPost(id, false)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // the client went away
	rec := httptest.NewRecorder()
	if got := post.respond(rec, httptest.NewRequest(http.MethodPost, "/mcp", nil).WithContext(ctx)); !got.none() {
		t.Fatalf("the POST whose client left wrote %q", got.joined())
	}
	// The POST's handler has returned; its deferred closePost has not run yet.
	if post.send(postMsg{msg: []byte(directAnswer), final: true}) {
		t.Error("an answer that came after its POST left was reported taken; nothing writes it")
	}
	st.closePost(id, post)
	if rec.Body.Len() != 0 {
		t.Errorf("the response holds %q", rec.Body.String())
	}
}

// However the answer and the client's leaving race, the answer is
// reported taken exactly when the POST writes it.
func TestPostAnswerReportedTakenIffWritten(t *testing.T) {
	for i := range 2000 {
		st := newHTTPStream("s", false, slog.New(slog.DiscardHandler), time.Minute)
		id := jsonrpc.IntID(int64(i))
		post, err := st.openPost(id, false)
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		rec := httptest.NewRecorder()
		written := make(chan postMsg)
		go func() {
			written <- post.respond(rec, httptest.NewRequest(http.MethodPost, "/mcp", nil).WithContext(ctx))
		}()
		reported := make(chan bool)
		go func() { reported <- post.send(postMsg{msg: []byte(directAnswer), final: true}) }()
		if i%2 == 0 {
			cancel()
		}
		got := <-written
		cancel()
		took := <-reported
		st.closePost(id, post)
		st.end()
		if wrote := string(got.joined()) == directAnswer && rec.Body.String() == directAnswer; took != wrote {
			t.Fatalf("round %d: the answer was reported taken: %v; the POST wrote it: %v (%q)", i, took, wrote, rec.Body.String())
		}
	}
}
