package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/mcpgate/mcpgate/jsonrpc"
	"github.com/mcpgate/mcpgate/proxy"
)

const callSummary = `Calls one tool through the gateway, as a client would (names, routing,
policies, the audit trail all apply), and prints the tool's result as JSON.
ARGUMENTS is a JSON object (default {}). Exit status: 0 when the tool
answered, 1 when the call failed or the tool reported an error (a result
with "isError": true, printed all the same), 2 for bad usage. Flags go
before the tool's name.

  mcpgate call fs__read_file '{"path": "/tmp/notes.txt"}'`

func runCall(args []string, stdout, stderr io.Writer) int {
	fs, c := newFlagSet("mcpgate call [flags] SERVER__TOOL [ARGUMENTS]", callSummary, stderr)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() < 1 || fs.NArg() > 2 {
		fmt.Fprintln(stderr, "mcpgate call: want the tool's name and, optionally, its arguments as a JSON object")
		fs.Usage()
		return 2
	}
	tool, arguments := fs.Arg(0), json.RawMessage(`{}`)
	if fs.NArg() == 2 {
		arguments = json.RawMessage(fs.Arg(1))
		var obj map[string]json.RawMessage
		if err := json.Unmarshal(arguments, &obj); err != nil || obj == nil {
			fmt.Fprintf(stderr, "mcpgate call: ARGUMENTS must be a JSON object, like '{\"path\": \"/tmp\"}', not %q\n", fs.Arg(1))
			return 2
		}
	}
	g, _, _, ok := setup(c, stderr, true)
	if !ok {
		return 1
	}
	g.Start()
	defer g.Close()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	res, err := callThrough(ctx, g, tool, arguments)
	if err != nil {
		fmt.Fprintln(stderr, "mcpgate call:", err)
		return 1
	}
	var out bytes.Buffer
	json.Indent(&out, res, "", "  ")
	out.WriteByte('\n')
	stdout.Write(out.Bytes())
	var r struct {
		IsError bool `json:"isError"`
	}
	json.Unmarshal(res, &r)
	if r.IsError {
		fmt.Fprintf(stderr, "mcpgate call: %s reported an error (isError)\n", tool)
		return 1
	}
	return 0
}

// callThrough calls tool as one client session of g: over a pair of pipes,
// initialize, initialized, then tools/call.
func callThrough(ctx context.Context, g *proxy.Gateway, tool string, arguments json.RawMessage) (json.RawMessage, error) {
	toGateway, fromClient := io.Pipe()
	toClient, fromGateway := io.Pipe()
	served := make(chan struct{})
	sctx, endSession := context.WithCancel(ctx)
	go func() {
		defer close(served)
		g.Serve(sctx, jsonrpc.NewLineStream(toGateway, fromGateway, fromGateway, 0), proxy.ServeOptions{})
	}()
	client := jsonrpc.NewConn(jsonrpc.NewLineStream(toClient, fromClient, fromClient, 0), jsonrpc.Options{}).Start()
	defer func() {
		client.Close()
		endSession()
		<-served
	}()
	init := fmt.Sprintf(`{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"mcpgate-call","version":%q}}`, version)
	if _, err := client.Call(ctx, "initialize", json.RawMessage(init)); err != nil {
		return nil, err
	}
	if err := client.Notify(ctx, "notifications/initialized", nil); err != nil {
		return nil, err
	}
	params, _ := json.Marshal(map[string]any{"name": tool, "arguments": arguments})
	return client.Call(ctx, "tools/call", params)
}
