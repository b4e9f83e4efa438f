//go:build unix

package proxy_test

import (
	"context"
	"encoding/json"
	"syscall"
	"testing"
	"time"
)

// BenchmarkModernStdioCall: the same tools/call on a stdio client session,
// legacy and modern (2026-07-28, its envelope declaring nothing), one at a
// time: the CPU of this process (client and gateway; the server is a child)
// per call, cpu-us/op, the two eras side by side. Run with -cpu 1 and
// compare the ratio, not the µs.
func BenchmarkModernStdioCall(b *testing.B) {
	for _, era := range []struct{ name, params string }{
		{"legacy", `{"name":"greeter__hello","arguments":{"text":"hello","n":42}}`},
		{"modern", `{"name":"greeter__hello","arguments":{"text":"hello","n":42},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"bench","version":"1"}}}`},
	} {
		b.Run(era.name, func(b *testing.B) {
			client := greeterClient(b, startGreeter(b, ""), "bench")
			ctx, params := context.Background(), json.RawMessage(era.params)
			for range 100 { // buffers grown, goroutines started
				if _, err := client.Call(ctx, "tools/call", params); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportAllocs()
			before := processCPU()
			b.ResetTimer()
			for range b.N {
				if _, err := client.Call(ctx, "tools/call", params); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			b.ReportMetric(float64((processCPU()-before).Microseconds())/float64(b.N), "cpu-us/op")
		})
	}
}

// processCPU is the CPU time (user and system) this process has used.
func processCPU() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
