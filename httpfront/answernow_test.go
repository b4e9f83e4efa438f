package httpfront

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mcpgate/mcpgate/jsonrpc"
)

// A request served elsewhere than on its POST's goroutine (an inline call,
// finished on a server's reader) is answered without waiting for the POST
// to take the answer: whoever answers goes on at once, whether the POST is
// waiting for it yet or not, and the POST then writes it as JSON.
func TestAnswerNeverWaitsForThePost(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st := newHTTPStream("s", false, slog.New(slog.DiscardHandler), time.Minute)
		defer st.end()
		id := jsonrpc.IntID(7)
		post, err := st.openPost(id, true)
		if err != nil {
			t.Fatal(err)
		}
		defer st.closePost(id, post)
		var answered atomic.Bool
		go func() {
			st.WriteRelated(context.Background(), []byte(directAnswer), id, true)
			answered.Store(true)
		}()
		synctest.Wait()
		if !answered.Load() {
			t.Fatal("the answer waits for its POST to take it")
		}
		if !st.TryWriteAnswer([]byte(directAnswer), id) {
			t.Error("TryWriteAnswer refused an answer of the Streamable HTTP transport")
		}
		rec := httptest.NewRecorder()
		got := post.respond(rec, httptest.NewRequest(http.MethodPost, "/mcp", nil))
		if string(got.joined()) != directAnswer || rec.Body.String() != directAnswer || rec.Header().Get("Content-Type") != "application/json" {
			t.Errorf("the POST answered %q (%s), want %q as JSON", rec.Body.String(), rec.Header().Get("Content-Type"), directAnswer)
		}
	})
}

// The legacy HTTP+SSE transport's answers go on its GET stream, which may
// wait: TryWriteAnswer leaves them to WriteRelated.
func TestAnswerNowNotOnTheLegacyStream(t *testing.T) {
	st := newHTTPStream("s", true, slog.New(slog.DiscardHandler), time.Minute)
	defer st.end()
	if st.TryWriteAnswer([]byte(directAnswer), jsonrpc.IntID(7)) {
		t.Error("TryWriteAnswer took an answer for the legacy GET stream")
	}
}

// A POST whose request is answered while it waits (its handler ran
// elsewhere) gets the answer through its slot, as JSON, over a real
// connection.
func TestAnswerFromAnotherGoroutine(t *testing.T) {
	st := newHTTPStream("s", false, slog.New(slog.DiscardHandler), time.Minute)
	t.Cleanup(st.end)
	st.ServeDirect(func(msg *jsonrpc.Message, raw []byte, here bool) func() {
		go st.TryWriteAnswer([]byte(directAnswer), msg.ID) // as a server's reader would
		return nil
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
	}))
	t.Cleanup(srv.Close)
	resp, err := srv.Client().Post(srv.URL, "application/json", strings.NewReader("{}"))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.Header.Get("Content-Type") != "application/json" || string(body) != directAnswer {
		t.Errorf("got %s %q, want the answer as JSON", resp.Header.Get("Content-Type"), body)
	}
}
