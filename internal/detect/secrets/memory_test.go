package secrets

import (
	"runtime"
	"testing"
)

// TestDetectorHeldMemory: what a detector keeps on the heap once built.
// It is live for the process's life, and the collector lets the heap grow
// to twice what is live before it collects: each of its bytes costs about
// two in a gateway's peak memory, where big results come and go
// (BenchmarkPerfBigResult's 1 MiB row with the default policies).
func TestDetectorHeldMemory(t *testing.T) {
	// About 310 KiB today (132 of them the skip's quads and whole heads;
	// 282 with its pairs, threes and heads before), 347 in one -race
	// process in three (the same all the process long); 382 KiB before the
	// automaton's table was halved. Under -race the margin is wider: the
	// race runtime's own heap moves the count by tens of KiB.
	limit := int64(352 << 10)
	if raceEnabled {
		limit = 400 << 10
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	d, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	held := int64(after.HeapAlloc) - int64(before.HeapAlloc)
	t.Logf("a detector holds %d KiB", held>>10)
	if held > limit {
		t.Errorf("a built detector holds %d KiB of heap; the bound is %d KiB", held>>10, limit>>10)
	}
	runtime.KeepAlive(d)
}

// TestDetectorBuildAllocates: what building a detector allocates, most of
// it dropped at once. A gateway builds the default one on its first scan,
// and its resident memory kept most of what that took: 1.4 MB before the
// automaton was built in its table and the patterns read on first use,
// 358 KiB after.
func TestDetectorBuildAllocates(t *testing.T) {
	const limit = 512 << 10
	allocated := testing.Benchmark(func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := New(Options{}); err != nil {
				b.Fatal(err)
			}
		}
	}).AllocedBytesPerOp()
	t.Logf("building a detector allocates %d KiB", allocated>>10)
	if allocated > limit {
		t.Errorf("building a detector allocates %d KiB; the bound is %d KiB", allocated>>10, limit>>10)
	}
}

// TestEveryRuleShapes: every built-in pattern passes the checks its
// shape makes when a keyword first wakes it (bounded, a token where it
// has bytes before its keyword), which New no longer makes.
func TestEveryRuleShapes(t *testing.T) {
	for _, r := range rules {
		if r.match != nil {
			continue
		}
		if _, err := shapeOf(r.kind, r.pattern, r.keywords, r.back, r.leftBound); err != nil {
			t.Error(err)
		}
	}
}
