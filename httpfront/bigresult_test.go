package httpfront

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate/jsonrpc"
)

// A big result goes to an HTTP client in its parts (envelope head, the
// result's own bytes, closing brace), never joined into one buffer: as a
// JSON answer whose Content-Length is their sum, and as an event after a
// notification. The client gets it byte for byte; what the answer
// allocates on the way is well below the result's size (joining it, and
// sse.Write's copies, cost one to four times its size).
func TestBigResultWrittenInParts(t *testing.T) {
	const size = 16 << 20
	text := bytes.Repeat([]byte("x"), size)
	result := json.RawMessage(`{"content":[{"type":"text","text":"` + string(text) + `"}]}`)
	note := []byte(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":1}}`)
	answer := `{"jsonrpc":"2.0","id":1,"result":` + string(result) + `}`
	for _, sse := range []bool{false, true} {
		t.Run(fmt.Sprintf("sse=%v", sse), func(t *testing.T) {
			st := newHTTPStream("s", false, slog.New(slog.DiscardHandler), time.Minute)
			conn := jsonrpc.NewConn(st, jsonrpc.Options{Handler: jsonrpc.HandlerFunc(func(ctx context.Context, msg *jsonrpc.Message) (json.RawMessage, error) {
				if sse {
					st.WriteRelated(ctx, note, msg.ID, false)
				}
				return result, nil
			})}).Start()
			defer conn.Close()
			defer st.end()
			want := answer
			if sse {
				want = "event: message\ndata: " + string(note) + "\n\nevent: message\ndata: " + answer + "\n\n"
			}
			w := &comparingWriter{t: t, want: []byte(want), header: http.Header{}}
			id := jsonrpc.IntID(1)
			post, err := st.openPost(id, sse)
			if err != nil {
				t.Fatal(err)
			}
			req := &jsonrpc.Message{ID: id, Method: "tools/call", Params: json.RawMessage(`{"name":"big"}`)}
			r := httptest.NewRequest(http.MethodPost, "/mcp", nil)
			runtime.GC()
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			st.deliver(req, nil)
			post.respond(w, r)
			runtime.ReadMemStats(&after)
			st.closePost(id, post)
			if w.off != len(w.want) {
				t.Fatalf("the client got %d bytes, want %d", w.off, len(w.want))
			}
			if !sse && w.header.Get("Content-Length") != strconv.Itoa(len(answer)) {
				t.Errorf("Content-Length %q, want %d", w.header.Get("Content-Length"), len(answer))
			}
			if allocated := after.TotalAlloc - before.TotalAlloc; allocated > size/4 {
				t.Errorf("answering with a %d MiB result allocated %d MiB, want at most %d MiB: the result was copied", size>>20, allocated>>20, size>>22)
			}
		})
	}
}

// comparingWriter is a client that checks what it gets against want as it
// comes, keeping none of it.
type comparingWriter struct {
	t      *testing.T
	want   []byte
	off    int
	header http.Header
}

func (w *comparingWriter) Header() http.Header { return w.header }
func (w *comparingWriter) WriteHeader(int)     {}
func (w *comparingWriter) Flush()              {}

func (w *comparingWriter) Write(p []byte) (int, error) {
	end := w.off + len(p)
	if end > len(w.want) || !bytes.Equal(p, w.want[w.off:end]) {
		w.t.Fatalf("the client got %.80q at offset %d, want %.80q", p, w.off, w.want[w.off:min(end, len(w.want))])
	}
	w.off = end
	return len(p), nil
}

// The same for a modern stateless request: its answer goes to its POST in
// parts, with 200 and the parts' length, unread (servedStatus would
// otherwise decode a result that mentions "error").
func TestStatelessBigResultWrittenInParts(t *testing.T) {
	const size = 16 << 20
	text := bytes.Repeat([]byte("error "), size/6)
	result := json.RawMessage(`{"content":[{"type":"text","text":"` + string(text) + `"}]}`)
	answer := `{"jsonrpc":"2.0","id":1,"result":` + string(result) + `}`
	req := &jsonrpc.Message{ID: jsonrpc.IntID(1), Method: "tools/call", Params: json.RawMessage(`{"name":"big"}`)}
	st := newStatelessStream(req, false)
	w := &comparingWriter{t: t, want: []byte(answer), header: http.Header{}}
	r := httptest.NewRequest(http.MethodPost, "/mcp", nil)
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	conn := jsonrpc.NewConn(st, jsonrpc.Options{Handler: jsonrpc.HandlerFunc(func(context.Context, *jsonrpc.Message) (json.RawMessage, error) {
		return result, nil
	})}).Start()
	defer conn.Close()
	st.serveHere() // as serveModern does
	st.respond(w, r, time.Minute, time.Minute)
	runtime.ReadMemStats(&after)
	close(st.gone)
	if w.off != len(w.want) {
		t.Fatalf("the client got %d bytes, want %d", w.off, len(w.want))
	}
	if w.header.Get("Content-Length") != strconv.Itoa(len(answer)) {
		t.Errorf("Content-Length %q, want %d", w.header.Get("Content-Length"), len(answer))
	}
	if allocated := after.TotalAlloc - before.TotalAlloc; allocated > size/4 {
		t.Errorf("answering with a %d MiB result allocated %d MiB, want at most %d MiB: the result was copied or decoded", size>>20, allocated>>20, size>>22)
	}
}
