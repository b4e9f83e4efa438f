package proxy_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/mcpgate/mcpgate/config"
	"github.com/mcpgate/mcpgate/jsonrpc"
	"github.com/mcpgate/mcpgate/proxy"
)

// An inline call's state is reused once its call is answered (see
// inlinepool.go). Calls in flight from several sessions at once, some
// cancelled by their client and some past their deadline (a 1 ms timeout,
// which the answers race), each get their own answer and nothing else;
// under -race, a state reused while anything still held it shows as a
// race here.
func TestInlineCallReuse(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a server")
	}
	self, _ := os.Executable()
	cfgJSON := fmt.Sprintf(`{"mcpServers": {"greeter": {"command": %q, "env": {"MCPGATE_EXAMPLE_SERVER": "1"}, "timeout": "1ms"}}, "policies": []}`, self)
	cfg, err := config.Load([]byte(cfgJSON), "mcpgate.json", os.LookupEnv)
	if err != nil {
		t.Fatal(err)
	}
	g, err := proxy.New(cfg, proxy.Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	g.Start()
	defer g.Close()

	const sessions, callers, calls = 3, 6, 300
	var wg sync.WaitGroup
	errs := make(chan error, sessions*callers)
	for s := range sessions {
		toGateway, fromClient := io.Pipe()
		toClient, fromGateway := io.Pipe()
		go g.Serve(context.Background(), jsonrpc.NewLineStream(toGateway, fromGateway, fromGateway, 0), proxy.ServeOptions{})
		client := jsonrpc.NewConn(jsonrpc.NewLineStream(toClient, fromClient, fromClient, 0), jsonrpc.Options{}).Start()
		defer client.Close()
		ctx := context.Background()
		if _, err := client.Call(ctx, "initialize", json.RawMessage(`{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"reuse","version":"1"}}`)); err != nil {
			t.Fatal(err)
		}
		client.Notify(ctx, "notifications/initialized", nil)
		// The first call may wait for the tool list; from then on calls
		// go inline.
		if _, err := client.Call(ctx, "tools/list", nil); err != nil {
			t.Fatal(err)
		}
		for c := range callers {
			wg.Go(func() {
				for i := range calls {
					text := fmt.Sprintf("s%d-c%d-%d", s, c, i)
					call, err := client.Go(ctx, "tools/call", json.RawMessage(`{"name":"greeter__hello","arguments":{"echo":"`+text+`"}}`))
					if err != nil {
						errs <- err
						return
					}
					if i%4 == 0 {
						// Cancelled: no answer is owed; it may come all the same.
						client.Notify(ctx, "notifications/cancelled", json.RawMessage(`{"requestId":`+call.ID().String()+`}`))
						call.Abandon(errors.New("cancelled by the test"))
						continue
					}
					res, err := call.Wait(ctx)
					if err != nil {
						continue // past its deadline: an error is the answer
					}
					if !strings.Contains(string(res), `"`+text+`"`) {
						errs <- fmt.Errorf("call %s was answered %s", text, res)
						return
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
}
