package proxy

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate/config"
	"github.com/mcpgate/mcpgate/jsonrpc"
)

// A big answer that comes after the gateway gave its call up is decided
// on by nobody: its prescan (the line and its decoded strings, twice the
// result) is let go as the answer is, not held in the server's slot until
// the server's next big result.
func TestPrescanOfALateAnswerLetGo(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cfgJSON := fmt.Sprintf(`{"mcpServers": {"big": {"command": %q, "env": {"MCPGATE_EXAMPLE_SERVER": "1"}, "timeout": "1s"}}}`, self)
	cfg, err := config.Load([]byte(cfgJSON), "mcpgate.json", os.LookupEnv)
	if err != nil {
		t.Fatal(err)
	}
	g, err := New(cfg, Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	g.Start()
	defer g.Close()
	toGateway, fromClient := io.Pipe()
	toClient, fromGateway := io.Pipe()
	go g.Serve(context.Background(), jsonrpc.NewLineStream(toGateway, fromGateway, fromGateway, 0), ServeOptions{})
	client := jsonrpc.NewConn(jsonrpc.NewLineStream(toClient, fromClient, fromClient, 0), jsonrpc.Options{}).Start()
	defer client.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := client.Call(ctx, "initialize", json.RawMessage(`{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}`)); err != nil {
		t.Fatal(err)
	}
	client.Notify(ctx, "notifications/initialized", nil)

	// # The big call times out; its answer comes late.
	if res, err := client.Call(ctx, "tools/call", json.RawMessage(`{"name":"big__hello","arguments":{"late_big":true}}`)); err == nil {
		t.Fatalf("the held call was answered: %.100s", res)
	}
	u := g.live().upstreams[0]
	u.mu.Lock()
	w := u.wire
	u.mu.Unlock()
	givenUp := func() int {
		w.givenUp.mu.Lock()
		defer w.givenUp.mu.Unlock()
		return len(w.givenUp.calls)
	}
	if n := givenUp(); n != 1 {
		t.Fatalf("%d calls given up, want the big one", n)
	}
	if _, err := client.Call(ctx, "tools/call", json.RawMessage(`{"name":"big__hello","arguments":{"release":true}}`)); err != nil {
		t.Fatal(err)
	}
	// Told of the late answer once its line was read (and prescanned).
	for givenUp() != 0 {
		if ctx.Err() != nil {
			t.Fatal("the late answer never came")
		}
		time.Sleep(time.Millisecond)
	}

	// # Nobody decides on it: its prescan is not kept.
	if ps := u.prescan.last.Load(); ps != nil {
		t.Fatal("the prescan of a late answer nobody decides on is kept in the server's slot")
	}
}
