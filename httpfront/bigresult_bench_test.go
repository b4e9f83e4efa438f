package httpfront

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate/jsonrpc"
)

// BenchmarkBigResultHTTP: a 16 MiB result answered on a session's POST, as
// JSON and as an event after a notification, from the request's delivery
// to the last byte out (to a client that discards it).
func BenchmarkBigResultHTTP(b *testing.B) {
	const size = 16 << 20
	result := json.RawMessage(`{"content":[{"type":"text","text":"` + string(bytes.Repeat([]byte("x"), size)) + `"}]}`)
	for _, sse := range []bool{false, true} {
		b.Run(fmt.Sprintf("sse=%v", sse), func(b *testing.B) {
			st := newHTTPStream("s", false, slog.New(slog.DiscardHandler), time.Minute)
			conn := jsonrpc.NewConn(st, jsonrpc.Options{Handler: jsonrpc.HandlerFunc(func(ctx context.Context, msg *jsonrpc.Message) (json.RawMessage, error) {
				if sse {
					st.WriteRelated(ctx, []byte(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":1}}`), msg.ID, false)
				}
				return result, nil
			})}).Start()
			defer conn.Close()
			defer st.end()
			r := httptest.NewRequest(http.MethodPost, "/mcp", nil)
			b.SetBytes(int64(len(result)))
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				id := jsonrpc.IntID(int64(i + 1))
				post, err := st.openPost(id, sse)
				if err != nil {
					b.Fatal(err)
				}
				st.deliver(&jsonrpc.Message{ID: id, Method: "tools/call", Params: json.RawMessage(`{"name":"big"}`)}, nil)
				post.respond(discardResponse{http.Header{}}, r)
				st.closePost(id, post)
			}
		})
	}
}

type discardResponse struct{ header http.Header }

func (d discardResponse) Header() http.Header         { return d.header }
func (d discardResponse) WriteHeader(int)             {}
func (d discardResponse) Write(p []byte) (int, error) { return len(p), nil }
func (d discardResponse) Flush()                      {}
