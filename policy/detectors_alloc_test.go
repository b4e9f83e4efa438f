//go:build !race

// The race detector makes sync.Pool drop what it is given, so allocation
// counts mean something only without it.

package policy

import (
	"context"
	"runtime"
	"strings"
	"testing"
)

// TestDetectorsNoFindingNoAllocation: the hot path, a message with nothing
// to find, allocates nothing once the detectors' scratch is warm.
func TestDetectorsNoFindingNoAllocation(t *testing.T) {
	ctx := context.Background()
	for _, p := range defaultDetectorSet(t)[:2] {
		for _, msg := range []string{toolResult4K(), structuredResult4K()} {
			in := toolCall(Result, msg)
			allocs := testing.AllocsPerRun(50, func() {
				if d := p.Decide(ctx, in); d.Action != Allow {
					t.Fatalf("%s: %+v", p.Name(), d)
				}
			})
			if allocs != 0 {
				t.Errorf("%s: %v allocations per decision on a message with nothing to find", p.Name(), allocs)
			}
		}
	}
}

// TestRewriteStringsNoChangeNoAllocation: walking a message and replacing
// nothing allocates nothing, escapes included (the scratch is pooled).
func TestRewriteStringsNoChangeNoAllocation(t *testing.T) {
	for _, msg := range [][]byte{[]byte(toolResult4K()), []byte(structuredResult4K())} {
		allocs := testing.AllocsPerRun(100, func() {
			if _, err := rewriteStrings(msg, func(string) (string, bool) { return "", false }); err != nil {
				t.Fatal(err)
			}
		})
		if allocs != 0 {
			t.Errorf("%v allocations for a message with nothing replaced, want 0", allocs)
		}
	}
}

// TestRewriteStringsBigEscapedStringOneCopy: a big string with escapes (a
// text content of many lines) is unescaped into one buffer of its size,
// not grown step by step to several times it: a walk of a 4 MiB string
// allocates about 4 MiB (the limit is generous: 1.5x).
func TestRewriteStringsBigEscapedStringOneCopy(t *testing.T) {
	line := strings.Repeat("a line of ordinary tool output, ", 3) + "\n"
	text := strings.Repeat(line, (4<<20)/len(line))
	msg := []byte(toolResult(text))
	walk := func() {
		if _, err := rewriteStrings(msg, func(string) (string, bool) { return "", false }); err != nil {
			t.Fatal(err)
		}
	}
	walk()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	walk()
	runtime.ReadMemStats(&after)
	if got, limit := after.TotalAlloc-before.TotalAlloc, uint64(len(text))*3/2; got > limit {
		t.Errorf("walking a %d-byte escaped string allocated %d bytes, want at most %d", len(text), got, limit)
	}
}

// TestRedactBigResultOneCopy: redacting a secret in a big result makes
// one copy of it, the message that goes on (the limit is generous: 1.5x
// its size; the redacted text was once built apart, then copied). The
// text has no escapes, so that the walk reads it in place.
func TestRedactBigResultOneCopy(t *testing.T) {
	half := strings.Repeat("a line of ordinary tool output; ", (2<<20)/32)
	text := half + "key " + awsKey + " " + half
	in := toolCall(Result, toolResult(text))
	p := defaultDetectorSet(t)[0]
	p.Decide(context.Background(), in)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	d := p.Decide(context.Background(), in)
	runtime.ReadMemStats(&after)
	if d.Action != Modify || strings.Contains(string(d.Message), awsKey) {
		t.Fatalf("decision %v %q, want the key redacted", d.Action, d.Reason)
	}
	if got, limit := after.TotalAlloc-before.TotalAlloc, uint64(len(in.Message))*3/2; got > limit {
		t.Errorf("redacting a %d-byte result allocated %d bytes, want at most %d", len(in.Message), got, limit)
	}
}
