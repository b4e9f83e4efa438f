package httpfront_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"github.com/mcpgate/mcpgate/config"
	"github.com/mcpgate/mcpgate/httpfront"
	"github.com/mcpgate/mcpgate/jsonrpc"
	"github.com/mcpgate/mcpgate/proxy"
)

// TestMain lets the test binary stand in for an MCP server: the example
// starts it as its upstream.
func TestMain(m *testing.M) {
	if os.Getenv("MCPGATE_EXAMPLE_SERVER") == "1" {
		conn := jsonrpc.NewConn(jsonrpc.NewLineStream(os.Stdin, os.Stdout, nil, 0), jsonrpc.Options{
			Handler: jsonrpc.HandlerFunc(func(ctx context.Context, msg *jsonrpc.Message) (json.RawMessage, error) {
				switch msg.Method {
				case "initialize":
					return json.RawMessage(`{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"hello","version":"1"}}`), nil
				case "tools/list":
					return json.RawMessage(`{"tools":[{"name":"hello","inputSchema":{"type":"object"}},{"name":"stuck","inputSchema":{"type":"object"}}]}`), nil
				case "tools/call":
					if strings.Contains(string(msg.Params), `"stuck"`) { // runs until cancelled
						<-ctx.Done()
						return nil, ctx.Err()
					}
					var p struct {
						Arguments struct{ Echo string } `json:"arguments"`
					}
					if json.Unmarshal(msg.Params, &p) == nil && p.Arguments.Echo != "" { // tells calls apart
						return json.Marshal(map[string]any{"content": []map[string]string{{"type": "text", "text": "hello over HTTP " + p.Arguments.Echo}}})
					}
					return json.RawMessage(`{"content":[{"type":"text","text":"hello over HTTP"}]}`), nil
				}
				return nil, nil
			}),
		}).Start()
		<-conn.Done()
		return
	}
	os.Exit(m.Run())
}

// The gateway served over Streamable HTTP: initialize opens a session,
// whose id every later request carries.
func Example() {
	self, _ := os.Executable()
	cfgJSON := fmt.Sprintf(`{"mcpServers": {"greeter": {"command": %q, "env": {"MCPGATE_EXAMPLE_SERVER": "1"}}}}`, self)
	cfg, err := config.Load([]byte(cfgJSON), "mcpgate.json", os.LookupEnv)
	if err != nil {
		fmt.Println(err)
		return
	}
	g, err := proxy.New(cfg, proxy.Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		fmt.Println(err)
		return
	}
	g.Start()
	defer g.Close()
	srv := httptest.NewUnstartedServer(nil)
	front := httpfront.New(g, srv.Listener.Addr().String())
	srv.Config.Handler = front
	srv.Start()
	defer srv.Close()
	defer front.Close()

	post := func(session, body string) (string, string) {
		req, _ := http.NewRequest(http.MethodPost, srv.URL+"/mcp", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if session != "" {
			req.Header.Set("Mcp-Session-Id", session)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return "", err.Error()
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.Header.Get("Mcp-Session-Id"), strings.TrimSpace(resp.Status + " " + string(b))
	}
	session, _ := post("", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"example","version":"1"}}}`)
	_, answer := post(session, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	fmt.Println(answer)
	_, answer = post(session, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"greeter__hello","arguments":{}}}`)
	fmt.Println(answer)
	// Output:
	// 202 Accepted
	// 200 OK {"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"hello over HTTP"}]}}
}

// A client of MCP 2026-07-28 opens no session: each request is a POST of
// its own that carries the protocol version and the client's capabilities
// in its _meta, and mirrors its method and name into headers.
func Example_stateless() {
	self, _ := os.Executable()
	cfgJSON := fmt.Sprintf(`{"mcpServers": {"greeter": {"command": %q, "env": {"MCPGATE_EXAMPLE_SERVER": "1"}}}}`, self)
	cfg, _ := config.Load([]byte(cfgJSON), "mcpgate.json", os.LookupEnv)
	g, _ := proxy.New(cfg, proxy.Options{Logger: slog.New(slog.DiscardHandler)})
	g.Start()
	defer g.Close()
	srv := httptest.NewUnstartedServer(nil)
	front := httpfront.New(g, srv.Listener.Addr().String())
	srv.Config.Handler = front
	srv.Start()
	defer srv.Close()
	defer front.Close()

	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"greeter__hello","arguments":{},` + meta + `}}`
	req, _ := http.NewRequest(http.MethodPost, srv.URL+"/mcp", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", "tools/call")
	req.Header.Set("Mcp-Name", "greeter__hello")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer resp.Body.Close()
	answer, _ := io.ReadAll(resp.Body)
	fmt.Printf("%s, session %q\n%s", resp.Status, resp.Header.Get("Mcp-Session-Id"), answer)
	// Output:
	// 200 OK, session ""
	// {"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"hello over HTTP"}],"resultType":"complete"}}
}
