package policy

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mcpgate/mcpgate/internal/corpus"
)

// Corpora of realistic tool output for the detector benchmarks and the
// differential tests: what a file-reading, shell or API tool returns, as
// text of a given size. Each is deterministic (a fixed seed), so that two
// runs measure the same bytes.

// corpusNames are the corpora, in the order the benchmarks run them. "xs"
// is the perf suite's big result (fakeupstream's text_bytes: 'x' repeated);
// "mixed" is runs of json, logs and prose, as its 10MiB-mixed result.
var corpusNames = []string{"xs", "prose", "code", "json", "logs", "csv", "mixed"}

// corpusText returns the named corpus, cut to size bytes at a line end (or at
// size, for "xs").
func corpusText(tb testing.TB, name string, size int) string {
	tb.Helper()
	var b strings.Builder
	r := rand.New(rand.NewPCG(13, uint64(len(name))))
	for b.Len() < size {
		switch name {
		case "xs":
			return strings.Repeat("x", size)
		case "prose":
			corpus.Prose(&b, r)
		case "code":
			b.WriteString(goSource(tb))
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

// goSource is this module's own proxy package: real Go code, comments
// included.
func goSource(tb testing.TB) string {
	files, err := filepath.Glob("../proxy/*.go")
	if err != nil || len(files) == 0 {
		tb.Fatalf("no Go source for the code corpus: %v", err)
	}
	slices.Sort(files)
	var b strings.Builder
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			tb.Fatal(err)
		}
		b.Write(data)
	}
	return b.String()
}
