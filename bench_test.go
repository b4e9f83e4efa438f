package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate/jsonrpc"
)

// These benchmarks compare a tools/call round trip made directly to an
// upstream over stdio with the same call made through mcpgate, and time a
// tools/list fanned out to ten slow upstreams. They run the real binaries
// that TestMain puts on PATH. allocs/op counts the client's side only.

func BenchmarkToolCall(b *testing.B) {
	dir := b.TempDir()
	spec := writeFile(b, dir, "echo.json", `{"name": "echo", "tools": [{"name": "echo", "do": {"text": "ok"}}]}`)
	benchDirectAndGateway(b, dir, spec, "echo", json.RawMessage(`{"text":"hello","n":42,"nested":{"list":[1,2,3]}}`))
}

// benchDirectAndGateway times tool calls made straight to the fake server
// of spec, then through mcpgate in front of it.
func benchDirectAndGateway(b *testing.B, dir, spec, tool string, args json.RawMessage) {
	gate := writeFile(b, dir, "gate.json", fmt.Sprintf(`{"mcpServers": {"fake": {"command": "fakeupstream", "args": [%q]}}}`, spec))
	b.Run("direct", func(b *testing.B) {
		benchCalls(b, tool, args, "fakeupstream", spec)
	})
	b.Run("gateway", func(b *testing.B) {
		benchCalls(b, "fake__"+tool, args, "mcpgate", "-config", gate, "-log-level", "error")
	})
}

// BenchmarkToolCallWorking is BenchmarkToolCall for a tool that works for
// a millisecond, as real tools do: the gateway's cost against real work.
func BenchmarkToolCallWorking(b *testing.B) {
	dir := b.TempDir()
	spec := writeFile(b, dir, "work.json", `{"name": "work", "tools": [{"name": "work", "do": {"text": "ok", "work": "1ms"}}]}`)
	benchDirectAndGateway(b, dir, spec, "work", json.RawMessage(`{"text":"hello"}`))
}

// BenchmarkListTenSlow: ten upstreams each take 20ms to list their tools; a
// merged tools/list should take about 20ms, not 200ms.
func BenchmarkListTenSlow(b *testing.B) {
	dir := b.TempDir()
	var servers []string
	for i := range 10 {
		spec := writeFile(b, dir, fmt.Sprintf("s%d.json", i), fmt.Sprintf(
			`{"name": "s%d", "list_delay": "20ms", "capabilities": {"tools": {}}, "tools": [{"name": "t"}]}`, i))
		servers = append(servers, fmt.Sprintf(`"s%d": {"command": "fakeupstream", "args": [%q]}`, i, spec))
	}
	gate := writeFile(b, dir, "gate.json", `{"mcpServers": {`+strings.Join(servers, ",")+`}}`)
	c, stop := startClient(b, "mcpgate", "-config", gate, "-log-level", "error")
	defer stop()
	b.ResetTimer()
	for range b.N {
		if _, err := c.Call(context.Background(), "tools/list", nil); err != nil {
			b.Fatal(err)
		}
	}
}

func benchCalls(b *testing.B, tool string, args json.RawMessage, command string, cmdArgs ...string) {
	c, stop := startClient(b, command, cmdArgs...)
	defer stop()
	params, _ := json.Marshal(map[string]any{"name": tool, "arguments": args})
	ctx := context.Background()
	if _, err := c.Call(ctx, "tools/call", params); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if _, err := c.Call(ctx, "tools/call", params); err != nil {
			b.Fatal(err)
		}
	}
}

// startClient starts command as an MCP server on stdio and initializes it.
func startClient(b *testing.B, command string, args ...string) (*jsonrpc.Conn, func()) {
	b.Helper()
	cmd := exec.Command(command, args...)
	cmd.Stderr = os.Stderr
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	c := jsonrpc.NewConn(jsonrpc.NewLineStream(stdout, stdin, stdin, 0), jsonrpc.Options{}).Start()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if _, err := c.Call(ctx, "initialize", json.RawMessage(`{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}`)); err != nil {
		b.Fatal(err)
	}
	c.Notify(context.Background(), "notifications/initialized", nil)
	return c, func() {
		stdin.Close()
		io.Copy(io.Discard, stdout)
		cmd.Wait()
		c.Close()
	}
}

func writeFile(b *testing.B, dir, name, content string) string {
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		b.Fatal(err)
	}
	return path
}

// BenchmarkToolCallPolicies: a tools/call whose result is 4 KB of text,
// through mcpgate with no policy and with the default set (secrets
// redacted, injection and poisoning audited): the set should cost at most
// a fifth more.
func BenchmarkToolCallPolicies(b *testing.B) {
	dir := b.TempDir()
	text := strings.Repeat("The deployment finished; 42 pods are ready and the service answers on port 8080. ", 60)[:4096]
	spec := writeFile(b, dir, "text.json", fmt.Sprintf(`{"name": "text", "tools": [{"name": "text", "do": {"text": %q}}]}`, text))
	for _, c := range []struct{ name, policies string }{{"none", `, "policies": []`}, {"default-set", ``}} {
		gate := writeFile(b, dir, c.name+".json", fmt.Sprintf(`{"mcpServers": {"fake": {"command": "fakeupstream", "args": [%q]}}%s}`, spec, c.policies))
		b.Run(c.name, func(b *testing.B) {
			benchCalls(b, "fake__text", json.RawMessage(`{}`), "mcpgate", "-config", gate, "-log-level", "error")
		})
	}
}
