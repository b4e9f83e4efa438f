package main

import (
	"bufio"
	"io"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// results holds every value measured, by benchmark (its name without the
// GOMAXPROCS suffix) and unit, one per round.
type results map[string]map[string][]float64

// procsSuffix is what go test appends to a benchmark's name: -GOMAXPROCS
// (none when it is 1). No benchmark of the suite ends its own name in
// "-digits".
var procsSuffix = regexp.MustCompile(`-\d+$`)

// add reads go test -bench output and adds each benchmark's values. Lines
// that are not results (logs, PASS, skips) are passed over. A benchmark
// that measures several peers at once (BenchmarkPerfCallTurns) reports each
// one's value in UNIT@PEER, filed as UNIT of the benchmark's name + /PEER,
// where a benchmark of that peer alone would have put it.
func (r results) add(out io.Reader) {
	lines := bufio.NewScanner(out)
	lines.Buffer(nil, 1<<20)
	for lines.Scan() {
		fields := strings.Fields(lines.Text())
		// Name, iterations, then value-unit pairs.
		if len(fields) < 4 || !strings.HasPrefix(fields[0], "Benchmark") || len(fields)%2 != 0 {
			continue
		}
		if _, err := strconv.Atoi(fields[1]); err != nil {
			continue
		}
		name := procsSuffix.ReplaceAllString(fields[0], "")
		for i := 2; i+1 < len(fields); i += 2 {
			v, err := strconv.ParseFloat(fields[i], 64)
			if err != nil {
				continue
			}
			bench := name
			unit, peer, _ := strings.Cut(fields[i+1], "@")
			if peer != "" {
				bench += "/" + peer
			}
			if r[bench] == nil {
				r[bench] = map[string][]float64{}
			}
			r[bench][unit] = append(r[bench][unit], v)
		}
	}
}

// median is the median of a benchmark's values in unit over the rounds,
// and whether there was any.
func (r results) median(bench, unit string) (float64, bool) {
	values := r[bench][unit]
	if len(values) == 0 {
		return 0, false
	}
	sorted := slices.Clone(values)
	slices.Sort(sorted)
	n := len(sorted)
	if n%2 == 1 {
		return sorted[n/2], true
	}
	return (sorted[n/2-1] + sorted[n/2]) / 2, true
}

// spread is how far a benchmark's values in unit lie apart, as a share of
// their median: the range of the middle half of them ((max − min) ÷ median
// for up to three values); 0 with fewer than two.
func (r results) spread(bench, unit string) float64 {
	values := slices.Clone(r[bench][unit])
	median, ok := r.median(bench, unit)
	if len(values) < 2 || !ok || median == 0 {
		return 0
	}
	slices.Sort(values)
	trim := len(values) / 4
	middle := values[trim : len(values)-trim]
	return (middle[len(middle)-1] - middle[0]) / median
}
