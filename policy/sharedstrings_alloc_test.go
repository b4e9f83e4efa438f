//go:build !race

// The race detector makes sync.Pool drop what it is given, so allocation
// counts mean something only without it.

package policy

import (
	"context"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"
)

// TestBigResultDecodingReused: a big result whose text has escapes (a line
// break every line) is decoded, for the default set's scans side by side,
// into a buffer reused from one Run to the next. Each Run allocated a
// buffer the size of the message, which the runtime cleared first: on a
// 10 MiB result of JSON, logs and prose, a quarter of the policies' peak
// memory beside bare mcpgate.
func TestBigResultDecodingReused(t *testing.T) {
	chain := defaultDetectorSet(t)
	text := strings.Repeat("2025-03-14T09:12:44.123Z INFO  http: GET /api/v1/items status=200 latency=12ms\n", (1<<20)/80)
	in := toolCall(Result, toolResult(text))
	ctx := context.Background()
	chain.Run(ctx, in) // the detectors built, their scratch grown, the decoding's buffer made
	// A collection empties the pool (in two cycles): none while this runs,
	// other tests running beside it notwithstanding.
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	const runs = 5
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range runs {
		if _, records, deny := chain.Run(ctx, in); deny != nil || len(records) != 0 {
			t.Fatalf("ordinary logs: records %v, denied %v", records, deny)
		}
	}
	runtime.ReadMemStats(&after)
	perRun := (after.TotalAlloc - before.TotalAlloc) / runs
	if limit := uint64(len(in.Message)) / 4; perRun > limit {
		t.Errorf("a Run of the default set on a %d-byte result with escapes allocated %d bytes, more than %d: its decoding not reused?", len(in.Message), perRun, limit)
	}
}

// TestDecodingBufferOfAHugeResultNotKept: once a huge result has been
// decoded, a smaller one does not take (and so keep in use) its buffer.
func TestDecodingBufferOfAHugeResultNotKept(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(-1)) // the pool kept meanwhile
	huge := make([]byte, 0, 64<<20)
	decodedBuffers.Put(&huge)
	b := takeDecoded(1 << 20)
	if cap(*b) > 4<<20 {
		t.Errorf("a 1 MiB result's decoding took a buffer of %d bytes", cap(*b))
	}
}
