package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/mcpgate/mcpgate/jsonrpc"
)

// demoServerCommand runs one of the two small MCP servers that "mcpgate
// demo" starts as upstreams. It is not listed in the usage: it exists so the
// demo needs nothing but this binary.
const demoServerCommand = "demo-server"

// demoTool is one tool of a demo server.
type demoTool struct {
	Name        string          `json:"name"`
	Title       string          `json:"title,omitempty"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"inputSchema"`
	call        func(args map[string]any) string
}

func runDemoServer(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) != 1 || (args[0] != "notes" && args[0] != "clock") {
		fmt.Fprintln(stderr, "usage: mcpgate demo-server notes|clock")
		return 2
	}
	var (
		mu    sync.Mutex
		notes []string
	)
	tools := map[string][]demoTool{
		"notes": {
			{Name: "add_note", Description: "Save a short note.", InputSchema: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}`),
				call: func(a map[string]any) string {
					mu.Lock()
					defer mu.Unlock()
					notes = append(notes, fmt.Sprint(a["text"]))
					return fmt.Sprintf("saved note #%d", len(notes))
				}},
			{Name: "list_notes", Description: "List every saved note.", InputSchema: json.RawMessage(`{"type":"object"}`),
				call: func(map[string]any) string {
					mu.Lock()
					defer mu.Unlock()
					return strings.Join(notes, "\n")
				}},
		},
		"clock": {
			{Name: "now", Description: "The current time in UTC.", InputSchema: json.RawMessage(`{"type":"object"}`),
				call: func(map[string]any) string { return time.Now().UTC().Format(time.RFC1123) }},
			{Name: "add_days", Description: "The date a number of days from today.", InputSchema: json.RawMessage(`{"type":"object","properties":{"days":{"type":"number"}},"required":["days"]}`),
				call: func(a map[string]any) string {
					days, _ := a["days"].(float64)
					return time.Now().UTC().AddDate(0, 0, int(days)).Format("Monday 2 January 2006")
				}},
		},
	}[args[0]]
	name := args[0]
	handler := func(ctx context.Context, msg *jsonrpc.Message) (json.RawMessage, error) {
		switch msg.Method {
		case "initialize":
			caps := map[string]any{"tools": map[string]any{}}
			if name == "notes" {
				caps["resources"] = map[string]any{}
			}
			return mustMarshal(map[string]any{
				"protocolVersion": "2025-11-25",
				"capabilities":    caps,
				"serverInfo":      map[string]string{"name": "demo-" + name, "version": version},
				"instructions":    "A demo server built into mcpgate.",
			}), nil
		case "ping":
			return json.RawMessage("{}"), nil
		case "tools/list":
			return mustMarshal(map[string]any{"tools": tools}), nil
		case "tools/call":
			var p struct {
				Name      string         `json:"name"`
				Arguments map[string]any `json:"arguments"`
			}
			json.Unmarshal(msg.Params, &p)
			for _, t := range tools {
				if t.Name == p.Name {
					return mustMarshal(map[string]any{"content": []any{map[string]string{"type": "text", "text": t.call(p.Arguments)}}}), nil
				}
			}
			return nil, fmt.Errorf("%w: unknown tool %q", jsonrpc.ErrInvalidParams, p.Name)
		case "resources/list":
			return json.RawMessage(`{"resources":[{"uri":"notes://all","name":"all notes","mimeType":"text/plain"}]}`), nil
		case "resources/read":
			mu.Lock()
			text := strings.Join(notes, "\n")
			mu.Unlock()
			return mustMarshal(map[string]any{"contents": []any{map[string]string{"uri": "notes://all", "mimeType": "text/plain", "text": text}}}), nil
		}
		if msg.IsRequest() {
			return nil, fmt.Errorf("%w: %s", jsonrpc.ErrMethodNotFound, msg.Method)
		}
		return nil, nil
	}
	conn := jsonrpc.NewConn(jsonrpc.NewLineStream(stdin, stdout, nil, 0), jsonrpc.Options{Handler: jsonrpc.HandlerFunc(handler)}).Start()
	<-conn.Done()
	conn.Wait(context.Background())
	return 0
}

func mustMarshal(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}
