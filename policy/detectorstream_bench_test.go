package policy

import (
	"fmt"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate/internal/detect/secrets"
)

// BenchmarkDetectorStream is the secrets detector's Stream beside its Scan
// on the 10 MiB mixed text of the perf suite's big result, cut in pieces
// as a pipe delivers them (1 MiB, 64 KiB): cpu-ns/op is the whole work,
// every piece's Advance and the Finish; finish-ns/op is Finish alone,
// once the last piece is in: what is left to scan after the read (wall
// time: a thread's CPU time is counted in ticks, too coarse for it).
func BenchmarkDetectorStream(b *testing.B) {
	text := corpusText(b, "mixed", 10<<20)
	d := secrets.Default()
	dst := d.Scan(text, nil) // built, scratch grown
	b.Run("scan", func(b *testing.B) {
		b.SetBytes(int64(len(text)))
		reportCPU(b, len(text), func() { dst = d.Scan(text, dst[:0]) })
	})
	for _, piece := range []int{1 << 20, 64 << 10} {
		b.Run(fmt.Sprintf("pieces-%dKiB", piece>>10), func(b *testing.B) {
			b.SetBytes(int64(len(text)))
			var finish time.Duration
			n := 0
			reportCPU(b, len(text), func() {
				s := d.Stream()
				for c := piece; c < len(text); c += piece {
					s.Advance(text[:c])
				}
				s.Advance(text)
				start := time.Now()
				dst = s.Finish(text, dst[:0])
				finish += time.Since(start)
				n++
			})
			b.ReportMetric(float64(finish.Nanoseconds())/float64(n), "finish-ns/op")
		})
	}
}
