package main

import (
	"fmt"
	"testing"
)

// BenchmarkPerfHTTPBigResult: BenchmarkPerfBigResult over Streamable HTTP, a
// tools/call whose result is 1, 10 or 50 MiB of text: answered by the fake
// server's own HTTP endpoint (direct) and by mcpgate -listen in front of
// the same server over stdio, max_message_bytes raised to let it through.
// The time of a call, and mcpgate's peak memory (VmHWM, warm-up included).
func BenchmarkPerfHTTPBigResult(b *testing.B) {
	sizes := []int{1, 10, 50}
	server := bigResultServer(b, sizes)
	for _, mib := range sizes {
		b.Run(fmt.Sprintf("%dMiB", mib), func(b *testing.B) {
			if mib > 10 && perfQuick() {
				b.Skip("the 50 MiB result takes seconds: skipped under -benchtime 1x and -short")
			}
			for _, variant := range []string{perfDirect, perfGate} {
				b.Run(variant, func(b *testing.B) {
					url, hopPID := startPerfHTTPPeerConfig(b, variant, server, `"max_message_bytes": 67108864`)
					c := newPerfHTTPClient(url, 1)
					if err := c.initialize(); err != nil {
						b.Fatalf("initialize: %v", err)
					}
					prefix := ""
					if variant == perfGate {
						prefix = "fake__"
					}
					small := perfToolCall(prefix+"small", `{}`)
					for range 3 {
						if a := c.call("tools/call", small); a.err != nil {
							b.Fatal(a.err)
						}
					}
					// One big call untimed too: the first grows every
					// process's memory, which the later ones reuse.
					params := perfToolCall(fmt.Sprintf("%sbig%d", prefix, mib), `{}`)
					benchPerfCalls(b, hopPID, 1, 1, func(chan perfAnswer) perfAnswer {
						return c.call("tools/call", params)
					})
					if hopPID != 0 {
						if peak, err := procMemory(hopPID, "VmHWM"); err == nil {
							b.ReportMetric(peak, "peak-rss-MiB")
						}
					}
				})
			}
		})
	}
}
