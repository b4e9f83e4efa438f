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
	const limit = 300 << 10 // about 210 KiB today; 420 KiB before the table was halved
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
