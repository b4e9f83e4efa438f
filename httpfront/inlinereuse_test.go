package httpfront_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/mcpgate/mcpgate/config"
	"github.com/mcpgate/mcpgate/httpfront"
	"github.com/mcpgate/mcpgate/proxy"
)

// An HTTP client's tools/call goes inline (proxy/httpinline.go), and its
// state is reused once answered (proxy/inlinepool.go). Calls in flight
// from several sessions at once, some cancelled by their client
// (notifications/cancelled), some whose client leaves (the POST's
// connection closed), some past their deadline (a 1 ms timeout, which the
// answers race), and a session deleted while its calls run, each get their
// own answer or none: under -race, a state reused while anything still
// held it shows as a race here, and an answer given to another POST as a
// mismatch.
func TestHTTPInlineCallReuse(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a server")
	}
	self, _ := os.Executable()
	cfg, err := config.Load([]byte(fmt.Sprintf(`{"mcpServers": {"greeter": {"command": %q, "env": {"MCPGATE_EXAMPLE_SERVER": "1"}, "timeout": "1ms"}}}`, self)), "mcpgate.json", os.LookupEnv)
	if err != nil {
		t.Fatal(err)
	}
	g, err := proxy.New(cfg, proxy.Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	g.Start()
	ts := httptest.NewUnstartedServer(nil)
	front := httpfront.New(g, ts.Listener.Addr().String())
	ts.Config.Handler = front
	ts.Start()
	defer func() {
		ts.CloseClientConnections()
		ts.Close()
		front.Close()
		g.Close()
	}()
	client := ts.Client()
	client.Transport.(*http.Transport).MaxIdleConnsPerHost = 64

	post := func(ctx context.Context, session, body string) (int, string, error) {
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, ts.URL+"/mcp", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if session != "" {
			req.Header.Set("Mcp-Session-Id", session)
			req.Header.Set("MCP-Protocol-Version", "2025-11-25")
		}
		resp, err := client.Do(req)
		if err != nil {
			return 0, "", err
		}
		defer resp.Body.Close()
		answer, err := io.ReadAll(resp.Body)
		return resp.StatusCode, string(answer), err
	}
	open := func() string {
		req, _ := http.NewRequest(http.MethodPost, ts.URL+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"reuse","version":"1"}}}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		session := resp.Header.Get("Mcp-Session-Id")
		ctx := context.Background()
		if status, _, err := post(ctx, session, `{"jsonrpc":"2.0","method":"notifications/initialized"}`); err != nil || status != http.StatusAccepted {
			t.Fatalf("notifications/initialized: %d %v", status, err)
		}
		// From now on calls of a listed tool go inline. The list, under
		// the 1 ms timeout too, may take a few attempts.
		for range 1000 {
			status, answer, err := post(ctx, session, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
			if err != nil || status != http.StatusOK {
				t.Fatalf("tools/list: %d %s %v", status, answer, err)
			}
			if strings.Contains(answer, "greeter__hello") {
				return session
			}
		}
		t.Fatal("tools/list never listed greeter__hello in 1000 attempts")
		return ""
	}

	const sessions, callers, calls = 3, 6, 150
	var wg sync.WaitGroup
	var results atomic.Int64 // answered with the result: a run that got none exercised no reuse
	errs := make(chan error, sessions*callers)
	for s := range sessions {
		session := open()
		deleted := s == sessions-1 // deleted while its calls run
		var callersDone sync.WaitGroup
		for c := range callers {
			callersDone.Add(1)
			wg.Go(func() {
				defer callersDone.Done()
				for i := range calls {
					if deleted && c == 0 && i == calls/2 {
						req, _ := http.NewRequest(http.MethodDelete, ts.URL+"/mcp", nil)
						req.Header.Set("Mcp-Session-Id", session)
						if resp, err := client.Do(req); err == nil {
							resp.Body.Close()
						}
					}
					id := fmt.Sprintf(`"s%d-c%d-%d"`, s, c, i)
					body := `{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{"name":"greeter__hello","arguments":{"echo":` + id + `}}}`
					ctx, cancel := context.WithCancel(context.Background())
					switch i % 4 {
					case 1: // cancelled by the client: no answer is owed
						go post(context.Background(), session, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":`+id+`}}`)
					case 2: // the client leaves
						go cancel()
					}
					status, answer, err := post(ctx, session, body)
					cancel()
					switch {
					case err != nil || status != http.StatusOK:
						// Left, cancelled (202), or the session deleted (404, 503).
						if err == nil && status != http.StatusAccepted && status != http.StatusNotFound && status != http.StatusServiceUnavailable {
							errs <- fmt.Errorf("call %s: %d %s", id, status, answer)
							return
						}
					case !strings.Contains(answer, `"id":`+id):
						errs <- fmt.Errorf("call %s was answered %s", id, answer)
						return
					case strings.Contains(answer, `"result"`) && !strings.Contains(answer, `hello over HTTP `+strings.Trim(id, `"`)):
						errs <- fmt.Errorf("call %s was answered %s", id, answer)
						return
					case strings.Contains(answer, `"result"`):
						results.Add(1)
					}
				}
			})
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if results.Load() == 0 {
		t.Error("no call was answered with its result: nothing was served inline, and no state reused")
	}
}
