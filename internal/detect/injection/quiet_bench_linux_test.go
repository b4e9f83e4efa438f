package injection

import (
	"runtime"
	"testing"
	"time"
)

// BenchmarkQuietCorpus measures the quiet phrase walk alone (quietPhrases)
// on 1 MiB of each realistic corpus, in CPU time of its thread ("cpu-ns",
// and "cpu-MB/s"), which other work on a busy machine changes far less
// than wall time.
func BenchmarkQuietCorpus(b *testing.B) {
	d := Default()
	for _, name := range realisticCorpora {
		text := realisticText(b, name, 1<<20)
		b.Run(name, func(b *testing.B) {
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			s := new(scanner)
			b.SetBytes(int64(len(text)))
			var cpu time.Duration
			n := 0
			for b.Loop() {
				var runs letterRun
				t0 := threadCPU()
				if !d.quietPhrases(s, text, &runs) {
					b.Fatal("the walk gave up")
				}
				cpu += threadCPU() - t0
				n++
			}
			b.ReportMetric(float64(cpu.Nanoseconds())/float64(n), "cpu-ns/op")
			b.ReportMetric(float64(len(text))*float64(n)/cpu.Seconds()/1e6, "cpu-MB/s")
		})
	}
}
