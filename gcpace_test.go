package main

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
	"testing"
)

func TestGCPercentFor(t *testing.T) {
	for _, c := range []struct {
		live uint64
		want int
	}{
		{0, gcMaxPercent},
		{1 << 20, gcMaxPercent},       // 16 MiB of headroom would be 1600%: capped
		{4 << 20, gcMaxPercent},       // 4 MiB + 16 MiB
		{8 << 20, 200},                // 8 MiB + 16 MiB
		{16 << 20, gcDefaultPercent},  // from the headroom up, the default pace
		{512 << 20, gcDefaultPercent}, // a big result's heap: a cycle each time it doubles
	} {
		if got := gcPercentFor(c.live); got != c.want {
			t.Errorf("gcPercentFor(%d MiB) = %d, want %d", c.live>>20, got, c.want)
		}
	}
}

// From the start, before any cycle, the pace is a small heap's: mcpgate's
// start and first list allocate a few MiB, mostly garbage, and at Go's
// default pace the first cycle came during the first list with the default
// policies; a cycle's own memory (mark bits, work buffers) then made the
// idle resident memory larger than the garbage left uncollected did.
func TestPaceGCStartsAtTheSmallHeapPace(t *testing.T) {
	if gogc := debug.SetGCPercent(gcDefaultPercent); gogc != gcDefaultPercent {
		debug.SetGCPercent(gogc)
		t.Skipf("GOGC=%d is set: paceGC leaves it alone", gogc)
	}
	t.Setenv("GOGC", "")
	t.Setenv("GOMEMLIMIT", "")
	defer debug.SetGCPercent(gcDefaultPercent)
	paceGCOnce = sync.Once{} // as at a process's start (-count, or another test first)
	paceGC()
	gogc := []metrics.Sample{{Name: "/gc/gogc:percent"}}
	if metrics.Read(gogc); gogc[0].Value.Uint64() != gcMaxPercent {
		t.Errorf("right after paceGC, before any cycle, GOGC is %d, want %d", gogc[0].Value.Uint64(), gcMaxPercent)
	}
}

// The pacer runs after each cycle: after one, GOGC is what the live heap
// it left calls for (a test binary's heap is small: the raised pace).
func TestPaceGCSetsPercentAfterACycle(t *testing.T) {
	if gogc := debug.SetGCPercent(gcDefaultPercent); gogc != gcDefaultPercent {
		debug.SetGCPercent(gogc)
		t.Skipf("GOGC=%d is set: paceGC leaves it alone", gogc)
	}
	t.Setenv("GOGC", "")
	t.Setenv("GOMEMLIMIT", "")
	defer debug.SetGCPercent(gcDefaultPercent)
	paceGC()
	gogc := []metrics.Sample{{Name: "/gc/gogc:percent"}}
	for range 100 { // the cleanup runs in the runtime's cleanup goroutine, after the cycle's sweep
		runtime.GC()
		if metrics.Read(gogc); gogc[0].Value.Uint64() == gcMaxPercent {
			return
		}
	}
	t.Fatalf("after 100 cycles with a small heap, GOGC is %d, want %d", gogc[0].Value.Uint64(), gcMaxPercent)
}
