package policy

import (
	"runtime/metrics"
	"strings"
	"testing"
)

// TestSharedDecodingSplitsOnlyLongStrings: a short string with an escape,
// ahead of megabytes of plain text, is decoded whole. Split, it started a
// goroutine decoding from the middle of the rest of the message (half of
// the plain text, for nothing) and waited for it; and the buffer it
// returned had no room left to split the long string that may follow.
func TestSharedDecodingSplitsOnlyLongStrings(t *testing.T) {
	msg := []byte(`{"content":[{"type":"text","text":"one\ntwo"},{"type":"text","text":"` +
		strings.Repeat("x", splitMin+splitMin/2) + `"}]}`)
	const runs = 50
	created := []metrics.Sample{{Name: "/sched/goroutines-created:goroutines"}}
	metrics.Read(created)
	before := created[0].Value.Uint64()
	for range runs {
		ss := &sharedStrings{msg: msg}
		if ss.of(msg) == nil {
			t.Fatal("not shared")
		}
		if len(ss.strings) != 4 || ss.strings[1].s != "one\ntwo" || len(ss.strings[3].s) != splitMin+splitMin/2 {
			t.Fatalf("decoded %d strings, want 4 (the short text and the long one as they are)", len(ss.strings))
		}
	}
	metrics.Read(created)
	// Generous, for goroutines the runtime or the test framework start
	// meanwhile: one per decoding is the bug.
	if n := created[0].Value.Uint64() - before; n >= runs/2 {
		t.Fatalf("%d decodings of a short escaped string started %d goroutines; want none", runs, n)
	}
}
