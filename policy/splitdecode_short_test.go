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

// TestSharedDecodingWastedSplitsBounded: strings of more than splitProbe
// bytes that end before the split point are split for nothing (each split's
// goroutine decodes from the middle of the rest), maxSplitsWasted times a
// message at most; the buffer keeps its room for a long string after them.
func TestSharedDecodingWastedSplitsBounded(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"content":[`)
	const wasted = 40
	for range wasted {
		b.WriteString(`{"type":"text","text":"\n` + strings.Repeat("x", splitProbe+splitProbe/8) + `"},`)
	}
	b.WriteString(`{"type":"text","text":"\n` + strings.Repeat("y", 2*splitMin) + `"}]}`)
	msg := []byte(b.String())
	const runs = 5
	created := []metrics.Sample{{Name: "/sched/goroutines-created:goroutines"}}
	metrics.Read(created)
	before := created[0].Value.Uint64()
	for range runs {
		ss := &sharedStrings{msg: msg}
		if ss.of(msg) == nil {
			t.Fatal("not shared")
		}
		if n := len(ss.strings); n != 2*(wasted+1) || len(ss.strings[n-1].s) != 1+2*splitMin {
			t.Fatalf("decoded %d strings, want %d (the last of %d bytes)", n, 2*(wasted+1), 1+2*splitMin)
		}
	}
	metrics.Read(created)
	// Generous, for goroutines the runtime or the test framework start
	// meanwhile: one per string of 64 KiB is the bug.
	if n := created[0].Value.Uint64() - before; n >= runs*(maxSplitsWasted+wasted)/2 {
		t.Fatalf("%d decodings of %d strings ending before the split point started %d goroutines; want %d each at most", runs, wasted, n, maxSplitsWasted)
	}
}
