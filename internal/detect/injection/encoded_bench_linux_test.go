package injection

import (
	"runtime"
	"testing"
)

// BenchmarkScanEncodedCorpus measures the encoded-payload walk alone
// (scanEncoded, as Scan runs it: after the phrase walk has recorded its
// longest run of letters) on 1 MiB of each realistic corpus, in CPU time
// of the thread too ("cpu-ns/op"): on a busy machine, wall time mostly
// measures the wait for a core.
func BenchmarkScanEncodedCorpus(b *testing.B) {
	d := Default()
	for _, name := range realisticCorpora {
		text := realisticText(b, name, 1<<20)
		var runs letterRun
		d.phraseFree(text, &runs)
		b.Run(name, func(b *testing.B) {
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			var found []rawFinding
			b.SetBytes(int64(len(text)))
			t0 := threadCPU()
			for b.Loop() {
				found = d.scanEncoded(text, found[:0], &runs)
			}
			b.ReportMetric(float64((threadCPU()-t0).Nanoseconds())/float64(b.N), "cpu-ns/op")
		})
	}
}
