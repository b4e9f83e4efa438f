package policy

import (
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

// corpusText returns the named corpus (internal/corpus), cut to size bytes
// at a line end (or at size, for "xs").
func corpusText(tb testing.TB, name string, size int) string {
	tb.Helper()
	text, err := corpus.Text(name, size, "../proxy")
	if err != nil {
		tb.Fatal(err)
	}
	return text
}
