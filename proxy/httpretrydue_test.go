package proxy

import (
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mcpgate/mcpgate/config"
	"github.com/mcpgate/mcpgate/jsonrpc"
)

// A request that waited before its POST (here for the server's event
// stream) is retried only within what is left of its timeout, not within a
// whole timeout counted from the POST.
func TestRetryDeadlineCountsFromTheRequest(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var lists atomic.Int32
		srv := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			body, _ := io.ReadAll(r.Body)
			m, _ := jsonrpc.Decode(body)
			switch {
			case m == nil || r.Method != http.MethodPost:
				w.WriteHeader(http.StatusMethodNotAllowed)
			case m.Method == methodInitialize:
				w.Header().Set("Content-Type", "application/json")
				fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"f","version":"1"}}}`, m.ID)
			default:
				lists.Add(1)
				w.Header().Set("Retry-After", "1")
				http.Error(w, "restarting", http.StatusServiceUnavailable)
			}
		})
		l := newHTTPLink(config.Server{Name: "remote", URL: "http://remote.test/mcp", Timeout: 3 * time.Second, MaxTimeout: time.Minute}, 0, "test", slog.New(slog.DiscardHandler))
		l.client.Transport = handlerTransport{srv}
		defer l.stop(time.Second)
		initializeLink(t, l)

		// tools/list waits for the event stream, 2.5 s of its 3 s.
		msg := (&jsonrpc.Message{ID: jsonrpc.IntID(2), Method: methodToolsList}).Encode()
		if err := l.Write(t.Context(), msg); err != nil {
			t.Fatal(err)
		}
		time.Sleep(2500 * time.Millisecond)
		l.openGate()

		got, err := l.Read()
		if err != nil {
			t.Fatal(err)
		}
		if n := lists.Load(); n != 1 {
			t.Errorf("tools/list sent %d times; want once: a retry after 1 s would end past its deadline", n)
		}
		if !strings.Contains(string(got), "past the request's deadline") {
			t.Errorf("answer %s; want the error to say why it was not retried", got)
		}
	})
}
