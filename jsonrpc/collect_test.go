package jsonrpc

import (
	"io"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"strings"
	"testing"
)

// A run of big lines, each dropped once read, holds one of them in the heap
// at a time (two while the first's size is unknown), however the collector
// is paced: the garbage of the last one is collected before the next one's
// buffer is allocated, in every round, not once a second (a run of 50 MiB
// results 100 ms apart peaked at 162 to 261 MiB in some rounds: three to
// five of them). The collector's own pacing is off here, so that only what
// the reader does frees a line.
func TestBigLinesInARowHoldOneAtATime(t *testing.T) {
	if operatorPacesGC() {
		t.Skip("GOGC or GOMEMLIMIT is set: a collection is forced once a second then, not before each line")
	}
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	const size = collectEvery
	r := &repeatReader{line: `"` + strings.Repeat("x", size-2) + "\"\n"}
	objects := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	runtime.GC() // what tests before this one left
	metrics.Read(objects)
	before := objects[0].Value.Uint64()
	s := NewLineStream(r, io.Discard, nil, 2*size)
	for i := range 5 {
		line, err := s.Read()
		if err != nil || len(line) != size {
			t.Fatalf("line %d: Read = %d bytes, %v", i+1, len(line), err)
		}
		metrics.Read(objects)
		if held := int64(objects[0].Value.Uint64()) - int64(before); i > 0 && held > size+size/2 {
			t.Fatalf("after line %d the heap holds %d MiB more than before the first: want one line (%d MiB)",
				i+1, held>>20, size>>20)
		}
	}
}

// A collection before a line pays when the line is 32 MiB or more, the
// heap's garbage could make room for at least half of it and marking the
// heap costs a sixteenth of the line or less.
func TestCollectionPays(t *testing.T) {
	const mib = 1 << 20
	for _, c := range []struct {
		size, objects, scannable uint64
		want                     bool
	}{
		{50 * mib, 53 * mib, mib, true},       // the last 50 MiB result, answered
		{50 * mib, 103 * mib, mib, true},      // the last two
		{50 * mib, 25 * mib, mib, true},       // half of it could come from garbage
		{50 * mib, 20 * mib, mib, false},      // a first big line: nothing to free for it
		{50 * mib, 120 * mib, 3 * mib, true},  // marking 3 MiB to read 50
		{50 * mib, 120 * mib, 4 * mib, false}, // a heap with much to mark
		{32 * mib, 33 * mib, 2 * mib, true},
		{32 * mib, 33 * mib, 2*mib + 1, false},
		{31 * mib, 33 * mib, mib, false}, // smaller lines: once a second
		{10 * mib, 11 * mib, 0, false},
	} {
		h := heapState{objects: c.objects, scannable: c.scannable}
		if got := collectionPays(c.size, h); got != c.want {
			t.Errorf("collectionPays(%d MiB, objects %d MiB, scannable %d KiB) = %v, want %v",
				c.size/mib, c.objects/mib, c.scannable>>10, got, c.want)
		}
	}
}
