package main

import (
	"fmt"
	"testing"
)

// BenchmarkPerfStdioModern: BenchmarkPerfCall's mcpgate over stdio, the
// same tools/call legacy and modern (2026-07-28: its envelope in _meta,
// declaring no capabilities), C in flight, in one run: the gateway's CPU
// per call (hop-cpu-us/op) of the two eras side by side. Issue 13 asks
// that a modern call cost at most 1.15× a legacy one.
func BenchmarkPerfStdioModern(b *testing.B) {
	dir := b.TempDir()
	server := perfServer{"fake", writeFile(b, dir, "echo.json",
		`{"name": "echo", "tools": [{"name": "echo", "do": {"text": "ok"}}]}`)}
	legacy := perfToolCall("fake__echo", `{"text":"hello","n":42}`)
	modern := []byte(`{"name":"fake__echo","arguments":{"text":"hello","n":42},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"perf","version":"1"}}}`)
	for _, conc := range []int{1, 16} {
		for _, era := range []string{"legacy", "modern"} {
			b.Run(fmt.Sprintf("C=%d/%s", conc, era), func(b *testing.B) {
				p := startPerfPeer(b, perfGate, []perfServer{server}, "")
				params := legacy
				if era == "modern" {
					params = modern
				}
				benchPerfCalls(b, p.hopPID, conc, perfWarmup(), func(answered chan perfAnswer) perfAnswer {
					return p.client.call("tools/call", params, answered)
				})
			})
		}
	}
}
