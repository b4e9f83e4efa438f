package main

import (
	"fmt"
	"os"
	"testing"
	"time"
)

// BenchmarkPerfCallTurns: the throughput and hop CPU of BenchmarkPerfCall
// and BenchmarkPerfHTTP at C calls in flight, with the peers driven in
// turns: direct, the relay floor and mcpgate (bare and with its default
// policies) over stdio; over HTTP, the fake's own endpoint, the HTTP relay
// floor, mcpgate -listen and TBXark/mcp-proxy (when MCPGATE_TBXARK names
// it). A process's CPU
// per call, and its throughput, depend on how busy the machine is: the
// busier, the more messages each of its reads finds waiting, and the fewer
// system calls and wakeups a call costs. Measured one peer after the
// other, a burst of other work during one peer's second moved the relay's
// CPU per call by half and the ratio to it by a third. So here the peers
// are started together and driven perfTurns times each, b.N calls each in
// all, the order rotating every turn: whatever load the machine has falls
// on every peer alike. Each peer's figures are reported as
// calls/s@PEER and hop-cpu-us/op@PEER (the relay's or mcpgate's process,
// see procCPU), which benchreport files under the benchmark's name + /PEER.
func BenchmarkPerfCallTurns(b *testing.B) {
	dir := b.TempDir()
	server := perfServer{"fake", writeFile(b, dir, "echo.json",
		`{"name": "echo", "tools": [{"name": "echo", "do": {"text": "ok"}}]}`)}
	const args = `{"text":"hello","n":42,"nested":{"list":[1,2,3]}}`
	for _, conc := range []int{16, 64} {
		b.Run(fmt.Sprintf("C=%d", conc), func(b *testing.B) {
			var peers []perfTurnPeer
			for _, variant := range perfStdioPeers {
				p := startPerfPeer(b, variant, []perfServer{server}, "")
				params := perfToolCall(p.tool("fake", "echo"), args)
				peers = append(peers, perfTurnPeer{variant: variant, pid: p.hopPID, call: func(answered chan perfAnswer) perfAnswer {
					return p.client.call("tools/call", params, answered)
				}})
			}
			benchTurns(b, peers, conc)
		})
	}
	b.Run("HTTP-C=64", func(b *testing.B) {
		variants := []string{perfDirect, perfRelay, perfGate}
		if os.Getenv(tbxarkEnv) != "" {
			variants = append(variants, perfTBXark)
		}
		var peers []perfTurnPeer
		for _, variant := range variants {
			pid, call := startPerfHTTPEcho(b, variant, server, 64, args)
			peers = append(peers, perfTurnPeer{variant: variant, pid: pid, call: call})
		}
		benchTurns(b, peers, 64)
	})
}

// perfTurnPeer is a started peer driven in turns.
type perfTurnPeer struct {
	variant string
	pid     int // the process whose CPU is measured; 0: none (direct)
	call    func(answered chan perfAnswer) perfAnswer

	cpu     time.Duration // over its timed turns
	elapsed time.Duration
	unread  bool // a turn had no CPU to read (direct) or could not read it (no /proc): no CPU figure
}

// perfTurns is how many turns each peer's calls are split in: enough that
// a burst of load lasting a turn or two falls on every peer, few enough
// that a turn is thousands of calls, not mostly its first few, whose
// wakeups find the peer idle.
const perfTurns = 10

// benchTurns warms every peer up, then makes b.N calls to each, conc at
// a time, in turns, and reports each one's throughput and CPU.
func benchTurns(b *testing.B, peers []perfTurnPeer, conc int) {
	for _, p := range peers {
		if _, err := timeCalls(perfWarmup(), conc, p.call); err != nil {
			b.Fatalf("%s: warm-up: %v", p.variant, err)
		}
	}
	b.ResetTimer()
	done := 0
	for turn := range perfTurns {
		n := b.N*(turn+1)/perfTurns - done
		done += n
		if n == 0 {
			continue
		}
		for i := range peers {
			p := &peers[(turn+i)%len(peers)]
			cpu := startCPUMeter(p.pid)
			p.unread = p.unread || cpu.pid == 0
			run, err := timeCalls(n, conc, p.call)
			if err != nil {
				b.Fatalf("%s: %v", p.variant, err)
			}
			p.cpu += cpu.used(b)
			p.elapsed += run.elapsed
		}
	}
	b.StopTimer()
	for _, p := range peers {
		b.ReportMetric(float64(b.N)/p.elapsed.Seconds(), "calls/s@"+p.variant)
		if !p.unread {
			b.ReportMetric(microseconds(p.cpu)/float64(b.N), "hop-cpu-us/op@"+p.variant)
		}
	}
}
