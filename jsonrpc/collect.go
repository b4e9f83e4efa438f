package jsonrpc

import (
	"os"
	"runtime"
	"runtime/metrics"
	"sync"
	"sync/atomic"
	"time"
)

// collectFor collects the garbage before a line of size bytes is read into
// a buffer of its own when that pays (collectionPays: from collectEvery
// bytes, if the heap holds little to mark), and otherwise at most once a
// second in the whole process.
//
// The last big line (answered: garbage) is still in the heap when the next
// one's buffer is allocated, unless collected first: the collector's pacing
// cannot know it died (it was live when last marked). The new buffer then
// comes from other pages, and a cycle that marks while both are reachable
// (the last one's answer still being written) sets the next goal at twice
// them, which lets a third and a fourth pile up: with one collection a
// second, a run of 50 MiB results 100 ms apart peaked at 115 MiB in most
// rounds and 156 to 259 MiB in one round in five. Collected first, the last
// line's pages take the next one: one big buffer in the heap at a time, and
// the peak is the first line's (read before its size is known, see
// readLong), 111–114 MiB in every round. It costs two cycles a line where
// pacing made one, and pages the scavenger returns meanwhile (the heap goal
// falls with the garbage): 2–3 ms of CPU for 50 MiB, 5–11% of the hop's.
//
// Weighed against it: collecting only when the heap's free pages are fewer
// than the line's bytes left most rounds at two buffers but not all (free
// pages in pieces do not hold a line: 158 MiB once), for no CPU saved;
// collecting once the answer is written leaves the scavenger the whole
// time until the next line to return the freed pages, which that line then
// faults in again (80 ms for 50 MiB in a VM); a soft memory limit does the
// same, and below the live heap makes the collector run back to back.
//
// An operator who set GOGC or GOMEMLIMIT chose how the collector trades CPU
// for memory: then no collection is forced before each line, only the one a
// second that was forced before this, whatever the environment (GOGC=100
// set by hand let 50 MiB results pile up to 261 MiB without it).
func collectFor(size int) {
	if (!operatorPacesGC() && collectionPays(uint64(size), readHeapState())) || dueOnceASecond() {
		runtime.GC()
	}
}

// heapState is what collectionPays reads of the heap.
type heapState struct {
	objects   uint64 // bytes of heap objects: live, and garbage not yet freed
	scannable uint64 // bytes a collection marks: the heap's pointerful part, stacks, globals
}

// scanShare: a collection before a line pays when what it marks is at most
// 1/scanShare of the line's size. Marking runs at about a byte a
// nanosecond, reading a line (copy in, scan, copy out) at about 0.6 ns a
// byte: a collection then costs at most a tenth of the line's own CPU, and
// usually far less (a big line's buffer holds no pointers: it is not
// marked through).
const scanShare = 16

// collectEvery is the size of a line from which the garbage is collected
// before each one (when collectionPays): a collection's fixed costs (the
// second cycle the line's allocation then starts, the pages the scavenger
// returns meanwhile, the last line's pages zeroed for the next) come to a
// millisecond or two, a twentieth of reading 50 MiB but a fifth of reading
// 10 (alternated, 10 MiB results took 8.3 ms of hop CPU a call, 10.4 with a
// collection before each). Smaller big lines keep the collector's pacing
// and a collection a second.
const collectEvery = 32 << 20

// collectionPays reports whether collecting before a line of size bytes is
// worth it: the line is big enough that a collection costs little beside
// reading it, the heap has enough in it that its garbage could make room
// for at least half the line, and marking the heap costs little too. A
// heap holding much to mark (many sessions, big decoded lists) is left to
// the collector's pacing, so that a run of big lines does not make each
// reader wait on a costly collection.
func collectionPays(size uint64, h heapState) bool {
	return size >= collectEvery && h.objects >= size/2 && h.scannable <= size/scanShare
}

// heapSamples are the runtime/metrics samples heapState is read from, in
// its fields' order, kept between reads (under heapSamplesMu) so that a
// read allocates nothing: a reader of many long lines allocates once per
// line, its buffer.
var (
	heapSamplesMu sync.Mutex
	heapSamples   = []metrics.Sample{
		{Name: "/memory/classes/heap/objects:bytes"},
		{Name: "/gc/scan/total:bytes"},
	}
)

// readHeapState reads the heap's state: a few microseconds, no
// stop-the-world (runtime/metrics).
func readHeapState() heapState {
	heapSamplesMu.Lock()
	defer heapSamplesMu.Unlock()
	metrics.Read(heapSamples)
	value := func(i int) uint64 {
		if heapSamples[i].Value.Kind() != metrics.KindUint64 {
			return 0 // not in this runtime: the decision sees an empty heap and declines
		}
		return heapSamples[i].Value.Uint64()
	}
	return heapState{objects: value(0), scannable: value(1)}
}

// operatorPacesGC reports whether GOGC or GOMEMLIMIT is set: the collector
// is then paced as the operator chose (the runtime reads them at start).
var operatorPacesGC = sync.OnceValue(func() bool {
	return os.Getenv("GOGC") != "" || os.Getenv("GOMEMLIMIT") != ""
})

// lastForced is when dueOnceASecond last said yes (unix nanoseconds).
var lastForced atomic.Int64

// dueOnceASecond reports true at most once a second in the whole process:
// a line collectionPays declines still gets a collection now and then, and
// a peer that sends big lines in a row cannot make every reader wait on a
// costly one.
func dueOnceASecond() bool {
	now := time.Now().UnixNano()
	last := lastForced.Load()
	return now-last >= int64(time.Second) && lastForced.CompareAndSwap(last, now)
}
