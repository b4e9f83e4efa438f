package main

import (
	"cmp"
	"fmt"
	"io"
)

// The peers a row compares, in the columns' order; a benchmark's name ends
// with one of them.
const (
	peerDirect = iota
	peerRelay
	peerGate
	peerPolicies
	peers
)

// comparison is what mcpgate's value is set against in its cell.
type comparison int

const (
	toNothing  comparison = iota
	toRelay               // mcpgate ÷ relay
	toDirect              // mcpgate ÷ direct
	toSize                // mcpgate ÷ row.size (MiB): memory against the message
	plusDirect            // mcpgate − direct
)

// row is one line of the table: a path, the benchmark of each peer, the
// unit read from it and issue 13's goal.
type row struct {
	path  string
	bench [peers]string // full benchmark names; "" where the peer has none
	unit  string
	show  func(float64) string
	// higherIsBetter: a rate; the policies' cost is then mcpgate ÷ it.
	higherIsBetter bool
	compare        comparison
	size           float64 // toSize: the message's MiB
	goal           goal
	// base names what the direct column holds when it is not the server
	// itself (a peer such as TBXark/mcp-proxy): "direct" when empty.
	base string
	// alsoRelay: a toDirect row whose mcpgate cell also gives its ratio to
	// the relay floor, the best a gateway in front of a stdio server can do.
	alsoRelay bool
}

// goal is issue 13's target for mcpgate's cell, if the row has one.
type goal struct {
	text string // as printed: "≤ 1.25× relay"
	met  func(compared float64) bool
}

// policyBudget is how much the default policies may add (issue 13: "the
// default policy set adds ≤ 20%").
const policyBudget = 0.20

// suite is the table of issue 13, row by row.
func suite() []row {
	call := func(c string) [peers]string {
		return peersOf("BenchmarkPerfCall/C="+c, "direct", "relay", "mcpgate", "mcpgate-policies")
	}
	big := func(mib int) [peers]string {
		return peersOf(fmt.Sprintf("BenchmarkPerfBigResult/%dMiB", mib), "direct", "relay", "mcpgate", "mcpgate-policies")
	}
	hop := func(p [peers]string) [peers]string { p[peerDirect] = ""; return p }
	// Throughput and CPU at C=16 and 64 come from the peers driven in
	// turns, under the same load (BenchmarkPerfCallTurns).
	turns := func(c string) [peers]string {
		return peersOf("BenchmarkPerfCallTurns/C="+c, "direct", "relay", "mcpgate", "mcpgate-policies")
	}
	list := peersOf("BenchmarkPerfList5020", "direct", "relay", "mcpgate", "mcpgate-policies")
	start := peersOf("BenchmarkPerfColdStart", "direct", "", "mcpgate", "mcpgate-policies")
	rows := []row{
		{path: "stdio tools/call p50 (C=1)", bench: call("1"), unit: "p50-us", show: showMicros, compare: toRelay, goal: atMost(1.25, "relay")},
		{path: "stdio tools/call p99 (C=1)", bench: call("1"), unit: "p99-us", show: showMicros, compare: toRelay},
		{path: "stdio calls/s, C=1", bench: call("1"), unit: "calls/s", show: showRate, higherIsBetter: true, compare: toRelay},
		{path: "stdio calls/s, C=16", bench: turns("16"), unit: "calls/s", show: showRate, higherIsBetter: true, compare: toRelay},
		{path: "stdio calls/s, C=64", bench: turns("64"), unit: "calls/s", show: showRate, higherIsBetter: true, compare: toRelay},
		{path: "hop CPU per call (user+sys, C=16)", bench: hop(turns("16")), unit: "hop-cpu-us/op", show: showMicros, compare: toRelay, goal: atMost(1.3, "relay")},
		{path: "hop CPU per call (user+sys, C=64)", bench: hop(turns("64")), unit: "hop-cpu-us/op", show: showMicros, compare: toRelay},
		{path: "tools/list, 10 upstreams × 50 ms (direct: one)", bench: peersOf("BenchmarkPerfFanout", "direct", "", "mcpgate", ""), unit: "ns/op", show: showNanos, compare: toDirect},
		{path: "tools/list, 5,020 tools from 10 servers (direct: one server)", bench: list, unit: "ns/op", show: showNanos, compare: toDirect, goal: atMost(1.5, "direct")},
		{path: "the same, hop CPU per list", bench: hop(list), unit: "hop-cpu-us/op", show: showMicros, compare: toRelay},
		{path: "the same, from mcpgate's list cache", bench: peersOf("BenchmarkPerfList5020", "direct", "", "mcpgate-cached", ""), unit: "ns/op", show: showNanos, compare: toDirect},
	}
	for _, mib := range []int{1, 10, 50} {
		var timeGoal, memGoal goal
		if mib == 50 {
			timeGoal, memGoal = atMost(1.3, "direct"), atMost(2.5, "the result")
		}
		rows = append(rows,
			row{path: fmt.Sprintf("%d MiB result, time (p50)", mib), bench: big(mib), unit: "p50-us", show: showMicros, compare: toDirect, goal: timeGoal},
			row{path: fmt.Sprintf("%d MiB result, hop peak RSS", mib), bench: hop(big(mib)), unit: "peak-rss-MiB", show: showMiB, compare: toSize, size: float64(mib), goal: memGoal})
	}
	// A gateway that checks a message holds it whole before passing it on:
	// its floor is a relay that does the same (relayfloor -whole), not one
	// that streams and overlaps its two transfers.
	rows = append(rows, row{path: "50 MiB result, time (relay floor: a relay that holds each line whole)",
		bench: peersOf("BenchmarkPerfBigResult/50MiB", "direct", "relay-whole", "mcpgate", ""), unit: "p50-us", show: showMicros, compare: toRelay})
	// The policies' honest cost: a result of JSON, logs and prose, not one
	// repeated byte (their detectors' cost per byte depends on the text).
	rows = append(rows, row{path: "10 MiB result of JSON, logs and prose, time (p50)", bench: peersOf("BenchmarkPerfBigResult/10MiB-mixed", "direct", "relay", "mcpgate", "mcpgate-policies"),
		unit: "p50-us", show: showMicros, compare: toDirect})
	// C=64 is measured in turns with the relay (BenchmarkPerfCallTurns).
	const httpC1, httpC64 = "BenchmarkPerfHTTP/C=1", "BenchmarkPerfCallTurns/HTTP-C=64"
	httpCalls := func(bench string) [peers]string { return peersOf(bench, "direct", "relay", "mcpgate", "") }
	tbxark := func(bench string) [peers]string { return peersOf(bench, "tbxark", "", "mcpgate", "") }
	rows = append(rows,
		row{path: "HTTP front p50, C=1 (direct: the server's own HTTP; relay floor: the HTTP relay)", bench: httpCalls(httpC1), unit: "p50-us", show: showMicros, compare: toDirect, alsoRelay: true, goal: atMost(1.3, "direct")},
		row{path: "HTTP front calls/s, C=64", bench: httpCalls(httpC64), unit: "calls/s", show: showRate, higherIsBetter: true, compare: toDirect, alsoRelay: true, goal: atLeast(0.8, "direct")},
		row{path: "HTTP front, hop CPU per call (C=64)", bench: hop(httpCalls(httpC64)), unit: "hop-cpu-us/op", show: showMicros, compare: toRelay},
		row{path: "HTTP front p50, C=1, beside TBXark/mcp-proxy (in the direct column)", bench: tbxark(httpC1), unit: "p50-us", show: showMicros, compare: toDirect, base: "TBXark"},
		row{path: "HTTP front calls/s, C=64, beside TBXark/mcp-proxy (in the direct column)", bench: tbxark(httpC64), unit: "calls/s", show: showRate, higherIsBetter: true, compare: toDirect, base: "TBXark", goal: atLeast(2, "TBXark")},
	)
	for _, mib := range []int{1, 10, 50} {
		var timeGoal, memGoal goal
		if mib == 50 {
			timeGoal, memGoal = atMost(1.3, "direct"), atMost(2.5, "the result")
		}
		httpBig := peersOf(fmt.Sprintf("BenchmarkPerfHTTPBigResult/%dMiB", mib), "direct", "", "mcpgate", "")
		rows = append(rows,
			row{path: fmt.Sprintf("HTTP %d MiB result, time (p50)", mib), bench: httpBig, unit: "p50-us", show: showMicros, compare: toDirect, goal: timeGoal},
			row{path: fmt.Sprintf("HTTP %d MiB result, mcpgate peak RSS", mib), bench: hop(httpBig), unit: "peak-rss-MiB", show: showMiB, compare: toSize, size: float64(mib), goal: memGoal})
	}
	return append(rows,
		row{path: "cold start, 10 servers: first tools/list answered (direct: the slowest server's own start)", bench: start, unit: "ns/op", show: showNanos, compare: plusDirect,
			goal: goal{text: "≤ direct + 30 ms", met: func(plus float64) bool { return plus <= 30e6 }}},
		row{path: "RSS with 10 idle servers", bench: hop(start), unit: "rss-MiB", show: showMiB,
			goal: goal{text: "≤ 12 MiB", met: func(rss float64) bool { return rss <= 12 }}},
	)
}

// ranIn reports whether any of the row's benchmarks has results in r.
func (row row) ranIn(r results) bool {
	for _, bench := range row.bench {
		if _, ok := r.median(bench, row.unit); ok && bench != "" {
			return true
		}
	}
	return false
}

func peersOf(prefix, direct, relay, gate, policies string) [peers]string {
	var p [peers]string
	for i, name := range []string{direct, relay, gate, policies} {
		if name != "" {
			p[i] = prefix + "/" + name
		}
	}
	return p
}

func atMost(limit float64, of string) goal {
	return goal{text: fmt.Sprintf("≤ %g× %s", limit, of), met: func(r float64) bool { return r <= limit }}
}

func atLeast(limit float64, of string) goal {
	return goal{text: fmt.Sprintf("≥ %g× %s", limit, of), met: func(r float64) bool { return r >= limit }}
}

// noisy marks a cell whose rounds lie further apart than spreadLimit.
const noisy = "†"

// spreadLimit is how far apart, as a share of their median, a cell's rounds
// may lie before the cell is marked noisy: one to read with care, or to
// measure again.
const spreadLimit = 0.25

// writeTable writes the table of rows as markdown, from the medians of r,
// and a note under it when a cell is marked noisy.
func writeTable(w io.Writer, rows []row, r results) {
	marked := false
	fmt.Fprintln(w, "| path | direct | relay floor | mcpgate | goal (issue 13) | mcpgate, default policies |")
	fmt.Fprintln(w, "|---|---:|---:|---:|---|---:|")
	for _, row := range rows {
		var v [peers]float64
		var has [peers]bool
		cells := [peers]string{"—", "—", "—", "—"}
		for p, bench := range row.bench {
			if bench == "" {
				continue
			}
			cells[p] = "not run"
			if v[p], has[p] = r.median(bench, row.unit); has[p] {
				cells[p] = row.show(v[p])
				if r.spread(bench, row.unit) > spreadLimit {
					cells[p] += noisy
					marked = true
				}
			}
		}
		compared, comparable := row.compared(v, has)
		if d := row.describe(compared); comparable && d != "" {
			if row.alsoRelay && has[peerRelay] && v[peerRelay] > 0 {
				d += fmt.Sprintf(", %.2f× relay", v[peerGate]/v[peerRelay])
			}
			cells[peerGate] += " (" + d + ")"
		}
		goalCell := ""
		if row.goal.text != "" {
			goalCell = row.goal.text
			if comparable {
				goalCell += map[bool]string{true: " ✓", false: " ✗"}[row.goal.met(compared)]
			}
		}
		if has[peerGate] && has[peerPolicies] && v[peerGate] > 0 && v[peerPolicies] > 0 {
			cost := v[peerPolicies]/v[peerGate] - 1
			if row.higherIsBetter {
				cost = v[peerGate]/v[peerPolicies] - 1
			}
			cells[peerPolicies] += fmt.Sprintf(" (%+.0f%%%s)", 100*cost, map[bool]string{true: " ✓", false: " ✗"}[cost <= policyBudget])
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s |\n", row.path, cells[peerDirect], cells[peerRelay], cells[peerGate], goalCell, cells[peerPolicies])
	}
	if marked {
		fmt.Fprintf(w, "\n%s: the rounds of this cell lie more than %.0f%% of their median apart.\n", noisy, 100*spreadLimit)
	}
}

// compared is what the row sets mcpgate's value against, and whether both
// were measured. A row without comparison compares mcpgate's value itself
// (to its goal).
func (row row) compared(v [peers]float64, has [peers]bool) (float64, bool) {
	if !has[peerGate] {
		return 0, false
	}
	ratio := func(base int) (float64, bool) {
		if !has[base] || v[base] == 0 {
			return 0, false
		}
		return v[peerGate] / v[base], true
	}
	switch row.compare {
	case toRelay:
		return ratio(peerRelay)
	case toDirect:
		return ratio(peerDirect)
	case toSize:
		return v[peerGate] / row.size, true
	case plusDirect:
		return v[peerGate] - v[peerDirect], has[peerDirect]
	}
	return v[peerGate], row.goal.text != ""
}

func (row row) describe(compared float64) string {
	switch row.compare {
	case toRelay:
		return fmt.Sprintf("%.2f× relay", compared)
	case toDirect:
		return fmt.Sprintf("%.2f× %s", compared, cmp.Or(row.base, "direct"))
	case toSize:
		return fmt.Sprintf("%.1f× the result", compared)
	case plusDirect:
		if compared < 0 {
			return "−" + row.show(-compared)
		}
		return "+" + row.show(compared)
	}
	return ""
}

func showMicros(us float64) string { return showNanos(us * 1e3) }

// showNanos keeps three figures or more: below 100 µs, tenths of one. A
// hop's CPU per call is a few µs, and in whole ones 8 against 6 sat beside
// the 1.37× of the values themselves, which the cells could not show.
func showNanos(ns float64) string {
	switch {
	case ns < 99.95e3: // from there on, tenths would print as 100.0
		return fmt.Sprintf("%.1f µs", ns/1e3)
	case ns < 1e6:
		return fmt.Sprintf("%.0f µs", ns/1e3)
	case ns < 10e6:
		return fmt.Sprintf("%.2f ms", ns/1e6)
	case ns < 1e9:
		return fmt.Sprintf("%.1f ms", ns/1e6)
	}
	return fmt.Sprintf("%.2f s", ns/1e9)
}

func showRate(perSecond float64) string {
	if perSecond >= 1000 {
		return fmt.Sprintf("%.1fk", perSecond/1000)
	}
	return fmt.Sprintf("%.0f", perSecond)
}

func showMiB(mib float64) string {
	if mib >= 100 {
		return fmt.Sprintf("%.0f MiB", mib)
	}
	return fmt.Sprintf("%.1f MiB", mib)
}
