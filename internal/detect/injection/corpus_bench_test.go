package injection

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mcpgate/mcpgate/internal/corpus"
	"github.com/mcpgate/mcpgate/internal/detect"
)

// realisticCorpora are the texts the detector's speed is measured on and
// its fast paths are checked against the reference scan with: what a
// file-reading, shell or API tool returns.
var realisticCorpora = []string{"prose", "english", "code", "json", "logs", "csv", "mixed"}

// realisticText returns the named corpus, about size bytes cut at a line
// end; deterministic, so that two runs measure the same bytes.
func realisticText(tb testing.TB, name string, size int) string {
	tb.Helper()
	var b strings.Builder
	r := rand.New(rand.NewPCG(13, uint64(len(name))))
	for b.Len() < size {
		switch name {
		case "prose":
			corpus.Prose(&b, r)
		case "english":
			// The prose without its sentences in other languages: plain
			// ASCII, dense with trigger words used as ordinary words.
			var p strings.Builder
			corpus.Prose(&p, r)
			for _, sentence := range strings.SplitAfter(p.String(), ". ") {
				if isASCII(sentence) {
					b.WriteString(sentence)
				}
			}
		case "code":
			b.WriteString(goSourceText(tb))
		case "json":
			corpus.JSONRecords(&b, r)
		case "logs":
			corpus.Logs(&b, r)
		case "csv":
			corpus.CSV(&b, r)
		case "mixed":
			return corpus.Mixed(size)
		default:
			tb.Fatalf("no corpus %q", name)
		}
	}
	text := b.String()[:size]
	if i := strings.LastIndexByte(text, '\n'); i > size/2 {
		text = text[:i+1]
	}
	return text
}

// goSourceText is the module's proxy package: real Go code, comments
// included.
func goSourceText(tb testing.TB) string {
	files, err := filepath.Glob("../../../proxy/*.go")
	if err != nil || len(files) == 0 {
		tb.Fatalf("no Go source for the code corpus: %v", err)
	}
	slices.Sort(files)
	var b strings.Builder
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue // tests plant injections on purpose: not the code a tool returns
		}
		data, err := os.ReadFile(f)
		if err != nil {
			tb.Fatal(err)
		}
		b.Write(data)
	}
	return b.String()
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
