package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/mcpgate/mcpgate/config"
	"github.com/mcpgate/mcpgate/jsonrpc"
	"github.com/mcpgate/mcpgate/proxy"
)

// runDemo shows the gateway at work with no config and no network: two
// small servers built into this binary are started as child processes, the
// gateway fronts them, and a client in this process talks to the gateway
// exactly as Claude Desktop would over stdio.
func runDemo(args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 {
		fmt.Fprintln(stderr, "usage: mcpgate demo\n\nRuns mcpgate against two built-in servers and shows the session.")
		if args[0] == "-h" || args[0] == "-help" || args[0] == "--help" {
			return 0
		}
		return 2
	}
	self, err := os.Executable()
	if err != nil {
		fmt.Fprintln(stderr, "mcpgate demo:", err)
		return 1
	}
	dir, err := os.MkdirTemp("", "mcpgate-demo")
	if err != nil {
		fmt.Fprintln(stderr, "mcpgate demo:", err)
		return 1
	}
	defer os.RemoveAll(dir)
	auditPath := filepath.Join(dir, "audit.jsonl")
	cfgJSON := fmt.Sprintf(`{
  "mcpServers": {
    "notes": {"command": %q, "args": ["demo-server", "notes"]},
    "clock": {"command": %q, "args": ["demo-server", "clock"]}
  },
  "audit": {"path": %q}
}`, self, self, auditPath)
	cfg, err := config.Load([]byte(cfgJSON), "demo.json", os.LookupEnv)
	if err != nil {
		fmt.Fprintln(stderr, "mcpgate demo:", err)
		return 1
	}
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	g, err := proxy.New(cfg, proxy.Options{Logger: log, UpstreamStderr: stderr, Version: version, Wardens: true})
	if err != nil {
		fmt.Fprintln(stderr, "mcpgate demo:", err)
		return 1
	}
	g.Start()

	// Two pipes make a stdio-like link between the client and the gateway.
	toGateway, fromClient := io.Pipe()
	toClient, fromGateway := io.Pipe()
	served := make(chan error, 1)
	go func() {
		served <- g.Serve(context.Background(), jsonrpc.NewLineStream(toGateway, fromGateway, fromGateway, 0), proxy.ServeOptions{})
	}()
	client := jsonrpc.NewConn(jsonrpc.NewLineStream(toClient, fromClient, fromClient, 0), jsonrpc.Options{}).Start()

	w := &demoWriter{out: stdout}
	w.run(client, cfgJSON)

	client.Close() // the gateway sees EOF, as when a client quits
	<-served
	g.Close()
	w.section("The audit trail (" + filepath.Base(auditPath) + "): one line per request, naming the server")
	data, _ := os.ReadFile(auditPath)
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var r map[string]any
		if json.Unmarshal([]byte(line), &r) != nil {
			continue
		}
		fmt.Fprintf(w.out, "  %-16v %-8v %-22v %-6v %6.1fms\n", r["method"], r["server"], orDash(r["name"]), r["outcome"], r["duration_ms"])
	}
	fmt.Fprintln(w.out, "\nNext: write mcpgate.json with your own servers (see README.md), then run \"mcpgate check\".")
	if w.failed {
		return 1
	}
	return 0
}

func orDash(v any) any {
	if v == nil {
		return "-"
	}
	return v
}

type demoWriter struct {
	out    io.Writer
	failed bool
}

func (w *demoWriter) section(title string) { fmt.Fprintf(w.out, "\n== %s\n", title) }

func (w *demoWriter) call(c *jsonrpc.Conn, method string, params any) json.RawMessage {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	res, err := c.Call(ctx, method, mustMarshal(params))
	if err != nil {
		fmt.Fprintf(w.out, "  %s failed: %v\n", method, err)
		w.failed = true
	}
	return res
}

func (w *demoWriter) run(c *jsonrpc.Conn, cfgJSON string) {
	fmt.Fprintln(w.out, "mcpgate demo: the gateway in front of two small MCP servers built into this binary.")
	w.section("The config (the same shape as Claude Desktop's)")
	fmt.Fprintln(w.out, cfgJSON)

	w.section("initialize: the client sees one server")
	var init struct {
		ProtocolVersion string         `json:"protocolVersion"`
		ServerInfo      map[string]any `json:"serverInfo"`
		Capabilities    map[string]any `json:"capabilities"`
	}
	json.Unmarshal(w.call(c, "initialize", map[string]any{
		"protocolVersion": "2025-11-25", "capabilities": map[string]any{},
		"clientInfo": map[string]string{"name": "demo-client", "version": version},
	}), &init)
	c.Notify(context.Background(), "notifications/initialized", nil)
	fmt.Fprintf(w.out, "  server %v %v, protocol %s\n", init.ServerInfo["name"], init.ServerInfo["version"], init.ProtocolVersion)

	w.section("tools/list: both servers' tools, each named server__tool")
	var tools struct {
		Tools []struct {
			Name        string `json:"name"`
			Description string `json:"description"`
		} `json:"tools"`
	}
	json.Unmarshal(w.call(c, "tools/list", map[string]any{}), &tools)
	tw := tabwriter.NewWriter(w.out, 0, 4, 2, ' ', 0)
	for _, t := range tools.Tools {
		fmt.Fprintf(tw, "  %s\t%s\n", t.Name, t.Description)
	}
	tw.Flush()

	w.section("tools/call: each call is routed to the server that owns the tool")
	for _, call := range []struct {
		name string
		args map[string]any
	}{
		{"notes__add_note", map[string]any{"text": "buy milk"}},
		{"clock__add_days", map[string]any{"days": 7}},
		{"notes__list_notes", map[string]any{}},
	} {
		var res struct {
			Content []struct {
				Text string `json:"text"`
			} `json:"content"`
		}
		json.Unmarshal(w.call(c, "tools/call", map[string]any{"name": call.name, "arguments": call.args}), &res)
		text := ""
		if len(res.Content) > 0 {
			text = res.Content[0].Text
		}
		args, _ := json.Marshal(call.args)
		fmt.Fprintf(w.out, "  %s %s\n    → %s\n", call.name, args, text)
	}

	w.section("resources: URIs are namespaced too, and reads go to their owner")
	var res struct {
		Resources []struct {
			URI string `json:"uri"`
		} `json:"resources"`
	}
	json.Unmarshal(w.call(c, "resources/list", map[string]any{}), &res)
	for _, r := range res.Resources {
		var read struct {
			Contents []struct {
				URI  string `json:"uri"`
				Text string `json:"text"`
			} `json:"contents"`
		}
		json.Unmarshal(w.call(c, "resources/read", map[string]any{"uri": r.URI}), &read)
		for _, ct := range read.Contents {
			fmt.Fprintf(w.out, "  %s → %q\n", ct.URI, ct.Text)
		}
	}

	w.section("an unknown tool gets a clear error, and the gateway keeps serving")
	_, err := c.Call(context.Background(), "tools/call", mustMarshal(map[string]any{"name": "nope__missing", "arguments": map[string]any{}}))
	fmt.Fprintf(w.out, "  error: %v\n", err)
}
