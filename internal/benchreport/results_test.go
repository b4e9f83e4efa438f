package main

import (
	"strings"
	"testing"
)

func TestResultsAdd(t *testing.T) {
	out := `goos: linux
BenchmarkPerfCall/C=1/direct-2         	    4000	    143000 ns/op	         0.07520 answer-KiB	      6993 calls/s	       140.5 p50-us	       300.0 p99-us
BenchmarkPerfCall/C=1/mcpgate-policies-2	    4000	    400000 ns/op	      2500 calls/s	     80.25 hop-cpu-us/op
    perf_bench_test.go:170: the 50 MiB result takes seconds: skipped
--- SKIP: BenchmarkPerfBigResult/50MiB
BenchmarkPerfColdStart/mcpgate	      10	 139100000 ns/op	        15.50 rss-MiB
BenchmarkPerfHopCPU/C=16-2	  100000	     70000 ns/op	     52000 calls/s@mcpgate	        5.965 hop-cpu-us/op@mcpgate	         4.391 hop-cpu-us/op@relay
PASS
`
	r := results{}
	r.add(strings.NewReader(out))
	r.add(strings.NewReader(strings.ReplaceAll(out, "140.5 p50-us", "150.5 p50-us")))
	r.add(strings.NewReader(strings.ReplaceAll(out, "140.5 p50-us", "120.5 p50-us")))
	for _, c := range []struct {
		bench, unit string
		want        float64
	}{
		{"BenchmarkPerfCall/C=1/direct", "p50-us", 140.5}, // the median of three rounds
		{"BenchmarkPerfCall/C=1/direct", "ns/op", 143000},
		{"BenchmarkPerfCall/C=1/mcpgate-policies", "hop-cpu-us/op", 80.25},
		{"BenchmarkPerfColdStart/mcpgate", "rss-MiB", 15.5},        // GOMAXPROCS 1: no suffix
		{"BenchmarkPerfHopCPU/C=16/relay", "hop-cpu-us/op", 4.391}, // UNIT@PEER: filed under the peer
		{"BenchmarkPerfHopCPU/C=16/mcpgate", "hop-cpu-us/op", 5.965},
		{"BenchmarkPerfHopCPU/C=16/mcpgate", "calls/s", 52000},
		{"BenchmarkPerfHopCPU/C=16", "ns/op", 70000},
	} {
		got, ok := r.median(c.bench, c.unit)
		if !ok || got != c.want {
			t.Errorf("median(%s, %s) = %v, %v; want %v", c.bench, c.unit, got, ok, c.want)
		}
	}
	if _, ok := r.median("BenchmarkPerfBigResult/50MiB/direct", "ns/op"); ok {
		t.Error("a skipped benchmark has a value")
	}
	if len(r) != 6 {
		t.Errorf("%d benchmarks read, want 6: %v", len(r), r)
	}
}

func TestMedianEven(t *testing.T) {
	r := results{"B": {"u": {4, 1, 3, 2}}}
	if got, _ := r.median("B", "u"); got != 2.5 {
		t.Errorf("median of 1..4 = %v, want 2.5", got)
	}
}

func TestSpread(t *testing.T) {
	r := results{
		"three":   {"u": {100, 130, 110}},
		"fifteen": {"u": {50, 100, 100, 101, 102, 103, 104, 105, 106, 107, 108, 109, 110, 300, 400}},
		"one":     {"u": {100}},
	}
	for _, c := range []struct {
		bench string
		want  float64
	}{
		{"three", 0.30 / 1.10}, // the whole range
		{"fifteen", 8.0 / 105}, // the middle half: 101 … 109
		{"one", 0},
	} {
		if got := r.spread(c.bench, "u"); got < c.want-1e-9 || got > c.want+1e-9 {
			t.Errorf("spread(%s) = %v, want %v", c.bench, got, c.want)
		}
	}
}
