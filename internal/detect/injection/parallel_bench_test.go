package injection

import (
	"runtime"
	"testing"
)

// BenchmarkScanMixed10MiB is Scan on 10 MiB of the mixed corpus (one
// text: BenchmarkPerfBigResult's), whole on one core and in pieces on all
// of them: their ratio is what the pieces save the client.
func BenchmarkScanMixed10MiB(b *testing.B) {
	d := Default()
	text := realisticText(b, "mixed", 10<<20)
	b.Run("whole", func(b *testing.B) {
		s := new(scanner)
		b.SetBytes(int64(len(text)))
		for b.Loop() {
			d.scan(s, text)
		}
	})
	b.Run("pieces", func(b *testing.B) {
		s := new(scanner)
		b.SetBytes(int64(len(text)))
		for b.Loop() {
			if _, ok := d.scanInPieces(s, text, pieceCount(len(text)), pieceMin, runtime.GOMAXPROCS(0)); !ok {
				b.Fatal("the pieces could not tell")
			}
		}
	})
}
