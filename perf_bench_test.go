package main

import (
	"flag"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate/internal/corpus"
)

// The benchmarks of issue 13: mcpgate beside its two floors, in one run,
// for the same fakeupstream: the server spoken to directly, and the relay
// floor (relayfloor_test.go) in front of it. `go run ./internal/benchreport`
// runs them (BenchmarkPerf*) in alternated rounds and prints the ratio
// table that the README's Performance section shows.
//
// The load generator is perfClient (perfclient_test.go) in this process;
// the peers are separate processes. Metrics beside ns/op:
//
//	calls/s          answered calls per second of the timed run
//	p50-us, p99-us   latency of one call, from its write to its answer
//	hop-cpu-us/op    user+system CPU of the relay or mcpgate per operation
//	                 (its CPU clock, see procCPU): not the client's, not
//	                 the server's
//	peak-rss-MiB     the relay's or mcpgate's VmHWM after the run
//	rss-MiB          mcpgate's VmRSS once its first tools/list is answered
//	answer-KiB       the size of one answer, as a check that it is whole
//
// Under -benchtime 1x (how .ci/run checks that benchmarks run) or -short,
// they only show that they work: ten warm-up calls instead of 300, and the
// 50 MiB result is skipped.

// perfStdioPeers are the peers of every stdio benchmark with a single
// server, in the order they run.
var perfStdioPeers = []string{perfDirect, perfRelay, perfGate, perfPolicies}

// perfQuick reports whether the benchmarks run only to show that they work.
func perfQuick() bool {
	f := flag.Lookup("test.benchtime")
	return testing.Short() || (f != nil && f.Value.String() == "1x")
}

// perfWarmup is how many calls are made, untimed, before the timed ones:
// the peers' buffers grown, their goroutines started, their code paged in.
func perfWarmup() int {
	if perfQuick() {
		return 10
	}
	return 300
}

// BenchmarkPerfCall: tools/call to a tool that answers at once, C calls in
// flight; what a gateway adds to each call, in time and in CPU.
func BenchmarkPerfCall(b *testing.B) {
	dir := b.TempDir()
	server := perfServer{"fake", writeFile(b, dir, "echo.json",
		`{"name": "echo", "tools": [{"name": "echo", "do": {"text": "ok"}}]}`)}
	const args = `{"text":"hello","n":42,"nested":{"list":[1,2,3]}}`
	for _, conc := range []int{1, 16, 64} {
		b.Run(fmt.Sprintf("C=%d", conc), func(b *testing.B) {
			for _, variant := range perfStdioPeers {
				b.Run(variant, func(b *testing.B) {
					p := startPerfPeer(b, variant, []perfServer{server}, "")
					params := perfToolCall(p.tool("fake", "echo"), args)
					benchPerfCalls(b, p.hopPID, conc, perfWarmup(), func(answered chan perfAnswer) perfAnswer {
						return p.client.call("tools/call", params, answered)
					})
				})
			}
		})
	}
}

// BenchmarkPerfList5020: tools/list of 5,020 tools, from one server listing
// them all (direct, relay) and through mcpgate from ten servers listing 502
// each, which mcpgate fetches, prefixes and merges for every list: the
// servers do not announce list changes, so nothing is cached. The
// mcpgate-cached peer's servers do announce them, so that its lists after
// the first come from mcpgate's cache.
func BenchmarkPerfList5020(b *testing.B) {
	dir := b.TempDir()
	const perServer = 502
	var all []string
	var fetched, cached []perfServer
	for s := range 10 {
		tools := make([]string, perServer)
		for i := range tools {
			tools[i] = perfToolDefinition(s, i)
		}
		all = append(all, tools...)
		list := strings.Join(tools, ",\n")
		name := fmt.Sprintf("s%d", s)
		fetched = append(fetched, perfServer{name, writeFile(b, dir, name+".json",
			`{"name": "`+name+`", "capabilities": {"tools": {}}, "tools": [`+list+`]}`)})
		cached = append(cached, perfServer{name, writeFile(b, dir, name+"-changing.json",
			`{"name": "`+name+`", "capabilities": {"tools": {"listChanged": true}}, "tools": [`+list+`]}`)})
	}
	one := []perfServer{{"all", writeFile(b, dir, "all.json",
		`{"name": "all", "capabilities": {"tools": {}}, "tools": [`+strings.Join(all, ",\n")+`]}`)}}
	for _, c := range []struct {
		name, variant string
		servers       []perfServer
	}{
		{perfDirect, perfDirect, one},
		{perfRelay, perfRelay, one},
		{perfGate, perfGate, fetched},
		{perfPolicies, perfPolicies, fetched},
		{"mcpgate-cached", perfGate, cached},
	} {
		b.Run(c.name, func(b *testing.B) {
			p := startPerfPeer(b, c.variant, c.servers, "")
			benchPerfCalls(b, p.hopPID, 1, 3, func(answered chan perfAnswer) perfAnswer {
				return p.client.call("tools/list", nil, answered)
			})
		})
	}
}

// perfToolDefinition is a tool as servers describe theirs: a sentence of
// description and a schema of three arguments (about 500 bytes).
func perfToolDefinition(server, i int) string {
	return fmt.Sprintf(`{"name": "s%d_query_%03d", "description": "Runs query %d of workspace %d against the records it holds and returns the rows as JSON, newest first; narrow them down with filter and limit.", `+
		`"inputSchema": {"type": "object", "properties": {"table": {"type": "string", "description": "the table to read"}, `+
		`"filter": {"type": "string", "description": "a filter expression such as status = 'open'"}, `+
		`"limit": {"type": "integer", "minimum": 1, "maximum": 1000, "description": "how many rows at most"}}, "required": ["table"]}}`,
		server, i, i, server)
}

// BenchmarkPerfFanout: tools/list when every server takes 50 ms to list its
// tools; ten through mcpgate should take what one takes directly.
func BenchmarkPerfFanout(b *testing.B) {
	dir := b.TempDir()
	var servers []perfServer
	for s := range 10 {
		name := fmt.Sprintf("s%d", s)
		servers = append(servers, perfServer{name, writeFile(b, dir, name+".json",
			`{"name": "`+name+`", "list_delay": "50ms", "capabilities": {"tools": {}}, "tools": [{"name": "t"}]}`)})
	}
	for _, c := range []struct {
		variant string
		servers []perfServer
	}{{perfDirect, servers[:1]}, {perfGate, servers}} {
		b.Run(c.variant, func(b *testing.B) {
			p := startPerfPeer(b, c.variant, c.servers, "")
			benchPerfCalls(b, p.hopPID, 1, 1, func(answered chan perfAnswer) perfAnswer {
				return p.client.call("tools/list", nil, answered)
			})
		})
	}
}

// BenchmarkPerfBigResult: a tools/call whose result is 1, 10 or 50 MiB of
// text, max_message_bytes raised to let it through mcpgate; the time of a
// call, and the peak memory of the process in between (its VmHWM, warm-up
// included). The text is one repeated byte, except in 10MiB-mixed and
// 50MiB-mixed: JSON records, logs and prose (corpus.Mixed), what the
// default policies' detectors really scan, at their cost per byte on such
// text.
func BenchmarkPerfBigResult(b *testing.B) {
	sizes := []int{1, 10, 50}
	server := bigResultServer(b, sizes)
	for _, mib := range sizes {
		b.Run(fmt.Sprintf("%dMiB", mib), func(b *testing.B) {
			if mib > 10 && perfQuick() {
				b.Skip("the 50 MiB result takes seconds: skipped under -benchtime 1x and -short")
			}
			benchBigResult(b, server, fmt.Sprintf("big%d", mib))
		})
	}
	// 50MiB-mixed is not in benchreport's rounds (the suite would pass 5
	// minutes): run it by hand, -bench 'BigResult/50MiB-mixed' -benchtime 3x.
	for _, mib := range []int{10, 50} {
		b.Run(fmt.Sprintf("%dMiB-mixed", mib), func(b *testing.B) {
			if mib > 10 && perfQuick() {
				b.Skip("the 50 MiB result takes seconds: skipped under -benchtime 1x and -short")
			}
			mixed := perfServer{"fake", writeFile(b, b.TempDir(), "mixed.json",
				`{"name": "mixed", "tools": [{"name": "small", "do": {"text": "ok"}}, {"name": "mixed", "do": {"text": `+
					string(mustMarshal(corpus.Mixed(mib<<20)))+`}}]}`)}
			benchBigResult(b, mixed, "mixed")
		})
	}
}

// benchBigResult times calls of server's tool, for each stdio peer and
// the relay that holds each line whole (the floor of a gateway that checks
// a message before it passes it on: the relay overlaps its two hops).
func benchBigResult(b *testing.B, server perfServer, tool string) {
	for _, variant := range append(perfStdioPeers[:len(perfStdioPeers):len(perfStdioPeers)], perfRelayWhole) {
		b.Run(variant, func(b *testing.B) {
			p := startPerfPeer(b, variant, []perfServer{server}, `"max_message_bytes": 67108864`)
			small := perfToolCall(p.tool("fake", "small"), `{}`)
			answered := make(chan perfAnswer, 1)
			for range 3 {
				if a := p.client.call("tools/call", small, answered); a.err != nil {
					b.Fatal(a.err)
				}
			}
			// One big call untimed too: the first grows the server's
			// memory (and every peer's), which the later ones reuse.
			params := perfToolCall(p.tool("fake", tool), `{}`)
			benchPerfCalls(b, p.hopPID, 1, 1, func(answered chan perfAnswer) perfAnswer {
				return p.client.call("tools/call", params, answered)
			})
			if p.hopPID != 0 {
				if peak, err := procMemory(p.hopPID, "VmHWM"); err == nil {
					b.ReportMetric(peak, "peak-rss-MiB")
				}
			}
		})
	}
}

// bigResultServer is a fake server with a tool "small" and, for each size,
// a tool "bigN" whose result is N MiB of text.
func bigResultServer(b *testing.B, sizes []int) perfServer {
	tools := []string{`{"name": "small", "do": {"text": "ok"}}`}
	for _, mib := range sizes {
		tools = append(tools, fmt.Sprintf(`{"name": "big%d", "do": {"text_bytes": %d}}`, mib, mib<<20))
	}
	return perfServer{"fake", writeFile(b, b.TempDir(), "big.json", `{"name": "big", "tools": [`+strings.Join(tools, ", ")+`]}`)}
}

// benchPerfCalls makes warmup calls, then b.N timed ones, conc at a time,
// and reports what they took.
// The CPU figure is of the process hopPID (0: none).
func benchPerfCalls(b *testing.B, hopPID, conc, warmup int, call func(answered chan perfAnswer) perfAnswer) {
	b.Helper()
	if _, err := timeCalls(warmup, conc, call); err != nil {
		b.Fatalf("warm-up: %v", err)
	}
	cpu := startCPUMeter(hopPID)
	faults := startFaultMeter(hopPID)
	b.ResetTimer()
	run, err := timeCalls(b.N, conc, call)
	b.StopTimer()
	if err != nil {
		b.Fatal(err)
	}
	run.report(b)
	cpu.report(b, b.N)
	faults.report(b, b.N)
}

// perfRun is the outcome of a timed run of calls.
type perfRun struct {
	latencies []time.Duration
	elapsed   time.Duration
	size      int // the bytes of the last answer
}

// timeCalls makes n calls, conc at a time (each worker with its own answer
// channel), timing each; it stops at the first that fails.
func timeCalls(n, conc int, call func(answered chan perfAnswer) perfAnswer) (perfRun, error) {
	run := perfRun{latencies: make([]time.Duration, n)}
	var next atomic.Int64
	var failed atomic.Pointer[error]
	var size atomic.Int64
	var wg sync.WaitGroup
	start := time.Now()
	for range min(conc, n) {
		wg.Go(func() {
			answered := make(chan perfAnswer, 1)
			for failed.Load() == nil {
				i := next.Add(1) - 1
				if i >= int64(n) {
					return
				}
				t := time.Now()
				a := call(answered)
				run.latencies[i] = time.Since(t)
				if a.err != nil {
					failed.CompareAndSwap(nil, &a.err)
					return
				}
				size.Store(int64(a.size))
			}
		})
	}
	wg.Wait()
	run.elapsed = time.Since(start)
	run.size = int(size.Load())
	if err := failed.Load(); err != nil {
		return run, *err
	}
	return run, nil
}

func (r perfRun) report(b *testing.B) {
	if len(r.latencies) == 0 {
		return
	}
	sorted := slices.Clone(r.latencies)
	slices.Sort(sorted)
	b.ReportMetric(float64(len(sorted))/r.elapsed.Seconds(), "calls/s")
	b.ReportMetric(microseconds(percentile(sorted, 50)), "p50-us")
	b.ReportMetric(microseconds(percentile(sorted, 99)), "p99-us")
	b.ReportMetric(float64(r.size)/1024, "answer-KiB")
}

// percentile is the nearest-rank percentile of sorted latencies.
func percentile(sorted []time.Duration, p int) time.Duration {
	rank := (len(sorted)*p + 99) / 100
	return sorted[max(rank, 1)-1]
}

func microseconds(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }

// cpuMeter measures the CPU a process uses from its start on.
type cpuMeter struct {
	pid   int // 0: nothing to measure
	start time.Duration
}

func startCPUMeter(pid int) cpuMeter {
	if pid == 0 {
		return cpuMeter{}
	}
	start, err := procCPU(pid)
	if err != nil {
		return cpuMeter{} // no /proc: no CPU figures
	}
	return cpuMeter{pid: pid, start: start}
}

// report reports the CPU used since the start per operation, as
// hop-cpu-us/op.
func (m cpuMeter) report(b *testing.B, ops int) {
	if m.pid == 0 || ops == 0 {
		return
	}
	b.ReportMetric(microseconds(m.used(b))/float64(ops), "hop-cpu-us/op")
}

// used is the CPU used since the start (0 with nothing to measure).
func (m cpuMeter) used(b *testing.B) time.Duration {
	if m.pid == 0 {
		return 0
	}
	now, err := procCPU(m.pid)
	if err != nil {
		b.Fatalf("the CPU of process %d: %v", m.pid, err)
	}
	return now - m.start
}
