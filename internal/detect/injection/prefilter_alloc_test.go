package injection

import (
	"runtime"
	"testing"
)

// maxFilterAllocs bounds the allocations of building every rule's prefix
// filter. A gateway builds the filters of the rules a tool list wakes as it
// checks it, at start: what they allocate is resident memory of an idle
// gateway. The walk once allocated each step of what was left to match,
// 80,000 allocations (3 MB) for all rules; its steps now share a stack.
const maxFilterAllocs = 40_000

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
}
