package proxy_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"testing"

	"github.com/mcpgate/mcpgate/config"
	"github.com/mcpgate/mcpgate/jsonrpc"
	"github.com/mcpgate/mcpgate/proxy"
)

// startGreeter starts a gateway in front of the example server (this test
// binary, MCPGATE_EXAMPLE_SERVER), with no policies; timeout, if not
// empty, is the server's. It is closed when the test ends.
func startGreeter(t testing.TB, timeout string) *proxy.Gateway {
	t.Helper()
	self, _ := os.Executable()
	server := fmt.Sprintf(`"command": %q, "env": {"MCPGATE_EXAMPLE_SERVER": "1"}`, self)
	if timeout != "" {
		server += fmt.Sprintf(`, "timeout": %q`, timeout)
	}
	cfg, err := config.Load([]byte(`{"mcpServers": {"greeter": {`+server+`}}, "policies": []}`), "mcpgate.json", os.LookupEnv)
	if err != nil {
		t.Fatal(err)
	}
	g, err := proxy.New(cfg, proxy.Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	g.Start()
	t.Cleanup(func() { g.Close() })
	return g
}

// greeterClient is a client session of g over pipes, initialized, closed
// when the test ends.
func greeterClient(t testing.TB, g *proxy.Gateway, name string) *jsonrpc.Conn {
	t.Helper()
	toGateway, fromClient := io.Pipe()
	toClient, fromGateway := io.Pipe()
	go g.Serve(context.Background(), jsonrpc.NewLineStream(toGateway, fromGateway, fromGateway, 0), proxy.ServeOptions{})
	client := jsonrpc.NewConn(jsonrpc.NewLineStream(toClient, fromClient, fromClient, 0), jsonrpc.Options{}).Start()
	t.Cleanup(func() { client.Close() })
	ctx := context.Background()
	if _, err := client.Call(ctx, "initialize", json.RawMessage(`{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"`+name+`","version":"1"}}`)); err != nil {
		t.Fatal(err)
	}
	client.Notify(ctx, "notifications/initialized", nil)
	return client
}
