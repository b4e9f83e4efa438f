package main

import (
	"flag"
	"testing"
)

// A peer whose CPU cannot be read (no /proc, as on darwin, or a process
// gone) has no hop-cpu-us/op@PEER figure, rather than one of 0.0 µs.
func TestPerfTurnsReportNoCPUUnread(t *testing.T) {
	const noSuchPID = 1 << 28 // past any pid_max (4,194,304 at most), within a clock id
	peers := []perfTurnPeer{{variant: "unread", pid: noSuchPID, call: func(chan perfAnswer) perfAnswer {
		return perfAnswer{}
	}}}
	// One call is enough, not the second of them a benchmark's b.N grows to.
	benchtime := flag.Lookup("test.benchtime")
	was := benchtime.Value.String()
	if err := benchtime.Value.Set("1x"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { benchtime.Value.Set(was) })
	res := testing.Benchmark(func(b *testing.B) { benchTurns(b, peers, 1) })
	if _, ok := res.Extra["calls/s@unread"]; !ok {
		t.Fatalf("benchTurns reported %v, want calls/s@unread", res.Extra)
	}
	if v, ok := res.Extra["hop-cpu-us/op@unread"]; ok {
		t.Errorf("benchTurns reported hop-cpu-us/op@unread = %.1f for a process whose CPU it could not read, want none", v)
	}
}
