package main

import (
	"fmt"
	"testing"
)

// BenchmarkPerfHTTPModern: the same tools/call over mcpgate -listen, in a
// legacy session and as a modern (2026-07-28) request without one, C in
// flight, in one run: the gateway's CPU per call (hop-cpu-us/op) of the
// two eras side by side. A modern request gets a gateway session of its
// own each time; issue 13 asks that it cost at most 1.3× a legacy call.
func BenchmarkPerfHTTPModern(b *testing.B) {
	dir := b.TempDir()
	server := perfServer{"fake", writeFile(b, dir, "echo.json",
		`{"name": "echo", "tools": [{"name": "echo", "do": {"text": "ok"}}]}`)}
	modern := []byte(`{"name":"fake__echo","arguments":{"text":"hello","n":42},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"perf","version":"1"}}}`)
	for _, conc := range []int{1, 16} {
		for _, era := range []string{"legacy", "modern"} {
			b.Run(fmt.Sprintf("C=%d/%s", conc, era), func(b *testing.B) {
				url, pid := startPerfHTTPPeer(b, perfGate, server)
				c := newPerfHTTPClient(url, conc)
				if err := c.initialize(); err != nil { // the warm-up's first call has the tools listed: the rest go by a listed name
					b.Fatal(err)
				}
				legacy := perfToolCall("fake__echo", `{"text":"hello","n":42}`)
				benchPerfCalls(b, pid, conc, perfWarmup(), func(chan perfAnswer) perfAnswer {
					if era == "modern" {
						return perfAnswer{err: modernCall(c, modern)}
					}
					return c.call("tools/call", legacy)
				})
			})
		}
	}
}
