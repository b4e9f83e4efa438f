package injection

import (
	"testing"

	"github.com/mcpgate/mcpgate/internal/corpus"
	"github.com/mcpgate/mcpgate/internal/detect"
)

// realisticCorpora are the texts the detector's speed is measured on and
// its fast paths are checked against the reference scan with: what a
// file-reading, shell or API tool returns.
var realisticCorpora = []string{"prose", "english", "code", "json", "logs", "csv", "mixed"}

// realisticText returns the named corpus (internal/corpus), about size
// bytes cut at a line end; deterministic, so that two runs measure the
// same bytes.
func realisticText(tb testing.TB, name string, size int) string {
	tb.Helper()
	text, err := corpus.Text(name, size, "../../../proxy")
	if err != nil {
		tb.Fatal(err)
	}
	return text
}

// BenchmarkScanCorpus measures Scan on 1 MiB of each realistic corpus.
func BenchmarkScanCorpus(b *testing.B) {
	d := Default()
	for _, name := range realisticCorpora {
		text := realisticText(b, name, 1<<20)
		b.Run(name, func(b *testing.B) {
			var dst []detect.Finding
			b.SetBytes(int64(len(text)))
			for b.Loop() {
				dst = d.Scan(text, dst[:0])
			}
		})
	}
}
