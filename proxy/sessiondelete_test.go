package proxy

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate/config"
	"github.com/mcpgate/mcpgate/jsonrpc"
)

// A client that ends its session (DELETE) while a call waits on the
// server's request to it gets the DELETE error for that call, even when
// the server answers the call at once from the failed request: the
// session fails its calls before the requests it relayed to the client.
// The test holds the session's end until the client has the call's
// answer, the interleaving that once let the server's answer through.
// Both ways a call is served: on a handler goroutine (its tool not
// listed yet), and inline (listed).
func TestDeleteFailsCallsBeforeTheirRequestsToTheClient(t *testing.T) {
	t.Run("handler", func(t *testing.T) { testDeleteFailsCallsFirst(t, false) })
	t.Run("inline", func(t *testing.T) { testDeleteFailsCallsFirst(t, true) })
}

func testDeleteFailsCallsFirst(t *testing.T, listed bool) {
	g := startExampleGateway(t, `"policies": []`)
	defer g.Close()
	res, err := callThenDelete(t, g, listed, `{"ask":true}`)
	const want = "the client ended the session (DELETE) while tools/call was in flight"
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("the call's answer after DELETE: %s, %v; want the error %q", res, err, want)
	}
}

// startExampleGateway starts a gateway in front of the example server
// (this test binary) as "greeter", with more (config members) beside it.
func startExampleGateway(t *testing.T, more string) *Gateway {
	t.Helper()
	self, _ := os.Executable()
	cfg, err := config.Load(fmt.Appendf(nil, `{"mcpServers": {"greeter": {"command": %q, "env": {"MCPGATE_EXAMPLE_SERVER": "1"}}}, %s}`, self, more), "mcpgate.json", os.LookupEnv)
	if err != nil {
		t.Fatal(err)
	}
	g, err := New(cfg, Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	g.Start()
	return g
}

// callThenDelete serves a session of g whose client calls greeter__hello
// with arguments (after tools/list if listed), and ends the session as a
// DELETE does once the server's sampling request reached it. The session's
// end is held (testHookClientLeft) until the client has the call's
// answer, which it returns; Serve has returned when it does.
func callThenDelete(t *testing.T, g *Gateway, listed bool, arguments string) (json.RawMessage, error) {
	t.Helper()
	return deleteDuringCall(t, g, listed, arguments, true)
}

// callThenDeleteUnheld is callThenDelete with the session's end not held:
// the call in flight is failed as soon as the session ends.
func callThenDeleteUnheld(t *testing.T, g *Gateway, listed bool, arguments string) (json.RawMessage, error) {
	t.Helper()
	return deleteDuringCall(t, g, listed, arguments, false)
}

func deleteDuringCall(t *testing.T, g *Gateway, listed bool, arguments string, holdEnd bool) (json.RawMessage, error) {
	t.Helper()
	answered := make(chan struct{})
	if holdEnd {
		testHookClientLeft = func() {
			select {
			case <-answered:
			case <-time.After(20 * time.Second): // generous: the answer is only the server's round trip away
			}
		}
		defer func() { testHookClientLeft = nil }()
	}

	toGateway, fromClient := io.Pipe()
	toClient, fromGateway := io.Pipe()
	var deleted atomic.Bool
	served := make(chan error, 1)
	go func() {
		served <- g.Serve(context.Background(), jsonrpc.NewLineStream(toGateway, fromGateway, fromGateway, 0), ServeOptions{Ended: deleted.Load})
	}()
	asked := make(chan struct{}, 1)
	client := jsonrpc.NewConn(jsonrpc.NewLineStream(toClient, fromClient, fromClient, 0), jsonrpc.Options{
		Handler: jsonrpc.HandlerFunc(func(ctx context.Context, msg *jsonrpc.Message) (json.RawMessage, error) {
			if msg.Method == "sampling/createMessage" {
				asked <- struct{}{}
				<-ctx.Done() // the client leaves before it answers
			}
			return nil, ctx.Err()
		}),
	}).Start()
	defer client.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if _, err := client.Call(ctx, "initialize", json.RawMessage(`{"protocolVersion":"2025-11-25","capabilities":{"sampling":{}},"clientInfo":{"name":"deleter","version":"1"}}`)); err != nil {
		t.Fatal(err)
	}
	client.Notify(ctx, "notifications/initialized", nil)
	if listed {
		if _, err := client.Call(ctx, "tools/list", nil); err != nil {
			t.Fatal(err)
		}
	}
	call, err := client.Go(ctx, "tools/call", json.RawMessage(`{"name":"greeter__hello","arguments":`+arguments+`}`))
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-asked:
	case <-ctx.Done():
		t.Fatal("the server's sampling request never reached the client")
	}
	// DELETE: the transport says so, then ends the session's stream.
	deleted.Store(true)
	fromClient.Close()
	res, callErr := call.Wait(ctx)
	close(answered)
	if err := <-served; err != nil {
		t.Errorf("Serve: %v", err)
	}
	return res, callErr
}
