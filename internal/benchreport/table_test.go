package main

import (
	"strings"
	"testing"
)

func TestWriteTable(t *testing.T) {
	r := results{
		"BenchmarkPerfCall/C=1/direct":                 {"p50-us": {143}},
		"BenchmarkPerfCall/C=1/relay":                  {"p50-us": {214}},
		"BenchmarkPerfCall/C=1/mcpgate":                {"p50-us": {429}},
		"BenchmarkPerfCall/C=1/mcpgate-policies":       {"p50-us": {472}},
		"BenchmarkPerfCallTurns/C=64/relay":            {"calls/s": {18100}},
		"BenchmarkPerfCallTurns/C=64/mcpgate":          {"calls/s": {17200}},
		"BenchmarkPerfCallTurns/C=64/mcpgate-policies": {"calls/s": {8600}},
		"BenchmarkPerfBigResult/50MiB/mcpgate":         {"peak-rss-MiB": {100}},
		"BenchmarkPerfColdStart/direct":                {"ns/op": {50e6}},
		"BenchmarkPerfColdStart/mcpgate":               {"ns/op": {75e6}, "rss-MiB": {10.2}},
		"BenchmarkPerfCallTurns/HTTP-C=64/direct":      {"calls/s": {24000}},
		"BenchmarkPerfCallTurns/HTTP-C=64/relay":       {"calls/s": {20000}},
		"BenchmarkPerfCallTurns/HTTP-C=64/mcpgate":     {"calls/s": {19200}},
		"BenchmarkPerfCallTurns/HTTP-C=64/tbxark":      {"calls/s": {9600}},
	}
	var b strings.Builder
	writeTable(&b, suite(), r)
	table := b.String()
	for _, want := range []string{
		"| stdio tools/call p50 (C=1) | 143 µs | 214 µs | 429 µs (2.00× relay) | ≤ 1.25× relay ✗ | 472 µs (+10% ✓) |",
		"| stdio calls/s, C=64 | not run | 18.1k | 17.2k (0.95× relay) |  | 8.6k (+100% ✗) |",
		"| 50 MiB result, hop peak RSS | — | not run | 100 MiB (2.0× the result) | ≤ 2.5× the result ✓ | not run |",
		"(+25.0 ms) | ≤ direct + 30 ms ✓ |",
		"| RSS with 10 idle servers | — | — | 10.2 MiB | ≤ 12 MiB ✓ | not run |",
		"| HTTP front p50, C=1 (direct: the server's own HTTP; relay floor: the HTTP relay) | not run | not run | not run | ≤ 1.3× direct | — |",
		"| HTTP front calls/s, C=64 | 24.0k | 20.0k | 19.2k (0.80× direct, 0.96× relay) | ≥ 0.8× direct ✓ | — |",
		"| HTTP front calls/s, C=64, beside TBXark/mcp-proxy (in the direct column) | 9.6k | — | 19.2k (2.00× TBXark) | ≥ 2× TBXark ✓ | — |",
	} {
		if !strings.Contains(table, want) {
			t.Errorf("the table has no line with\n%s\n%s", want, table)
		}
	}
}

func TestShow(t *testing.T) {
	for _, c := range []struct{ got, want string }{
		{showNanos(143e3), "143 µs"},
		{showNanos(5.55e6), "5.55 ms"},
		{showNanos(54.7e6), "54.7 ms"},
		{showNanos(4.5e9), "4.50 s"},
		{showMicros(65), "65.0 µs"},
		{showMicros(8.04), "8.0 µs"},
		{showMicros(99.94), "99.9 µs"},
		{showMicros(99.97), "100 µs"},
		{showRate(37400), "37.4k"},
		{showRate(532), "532"},
		{showMiB(12.34), "12.3 MiB"},
		{showMiB(345.2), "345 MiB"},
	} {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
}

// A hop's CPU per call is a few µs: its cells show tenths, and its ratio is
// of the values measured, not of the cells (6.0 and 8.0 would be 1.33×).
func TestHopCPUPrecision(t *testing.T) {
	r := results{
		"BenchmarkPerfCallTurns/C=16/relay":            {"hop-cpu-us/op": {5.96}},
		"BenchmarkPerfCallTurns/C=16/mcpgate":          {"hop-cpu-us/op": {8.04}},
		"BenchmarkPerfCallTurns/C=16/mcpgate-policies": {"hop-cpu-us/op": {9.05}},
	}
	var b strings.Builder
	writeTable(&b, suite(), r)
	want := "| hop CPU per call (user+sys, C=16) | — | 6.0 µs | 8.0 µs (1.35× relay) | ≤ 1.3× relay ✗ | 9.1 µs (+13% ✓) |"
	if !strings.Contains(b.String(), want) {
		t.Errorf("the table has no line with\n%s\n%s", want, b.String())
	}
}

func TestNoisyCells(t *testing.T) {
	r := results{
		"BenchmarkPerfCall/C=1/direct": {"p50-us": {100, 110, 105}},
		"BenchmarkPerfCall/C=1/relay":  {"p50-us": {100, 200, 150}},
	}
	var b strings.Builder
	writeTable(&b, suite()[:1], r)
	for _, want := range []string{
		"| stdio tools/call p50 (C=1) | 105 µs | 150 µs† | not run |",
		"†: the rounds of this cell lie more than 25% of their median apart.",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("no %q in\n%s", want, b.String())
		}
	}
	b.Reset()
	writeTable(&b, suite()[:1], results{"BenchmarkPerfCall/C=1/direct": {"p50-us": {100, 110, 105}}})
	if strings.Contains(b.String(), "†") {
		t.Errorf("a steady cell marked noisy:\n%s", b.String())
	}
}
