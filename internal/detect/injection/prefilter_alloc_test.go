package injection

import (
	"regexp/syntax"
	"runtime"
	"testing"
)

// maxFilterAllocs bounds the allocations of building every rule's prefix
// filter. A gateway builds the filters of the rules a tool list wakes as it
// checks it, at start: what they allocate is resident memory of an idle
// gateway. The walk once allocated each step of what was left to match,
// 80,000 allocations (3 MB) for all rules; its steps now share a stack.
const maxFilterAllocs = 40_000

// maxFilterBytes bounds the bytes the walks of the patterns' syntax and
// the sets allocate (parsing the patterns is a megabyte more): each walk
// growing its own buffer, each set keeping one, a map to count a set's
// heads, they were 1.36 MB; 0.37 MB with the walks' buffers shared (the
// first loop above made the walk's). (Not under the race detector, whose
// sync.Pool drops a quarter of what is put back.)
const maxFilterBytes = 1_100_000

func TestPrefixFiltersAreBuiltWithFewAllocations(t *testing.T) {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for _, r := range rules {
		newPrefixFilter(r.re.String())
	}
	runtime.ReadMemStats(&after)
	if n := after.Mallocs - before.Mallocs; n > maxFilterAllocs {
		t.Errorf("building the prefix filters of all %d rules allocated %d times, more than %d (%d bytes)", len(rules), n, maxFilterAllocs, after.TotalAlloc-before.TotalAlloc)
	}
	trees := make([]*syntax.Regexp, len(rules))
	for i, r := range rules {
		trees[i] = ruleSyntax(r.re.String())
	}
	runtime.ReadMemStats(&before)
	for _, re := range trees {
		prefixFilterOf(re, longPrefixLen)
	}
	runtime.ReadMemStats(&after)
	if n := after.TotalAlloc - before.TotalAlloc; n > maxFilterBytes && !raceEnabled {
		t.Errorf("building the prefix filters of all %d rules from their syntax allocated %d bytes, more than %d", len(rules), n, maxFilterBytes)
	}
}
