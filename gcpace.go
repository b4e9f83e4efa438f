package main

import (
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
)

// The collector's pace while the heap is small. Under load, mcpgate's live
// heap is a few MiB, so at Go's default pace (a cycle each time the heap
// doubles, 4 MiB at least) it collects every thousand or so HTTP calls, and
// each cycle's fixed costs (scanning every goroutine's stack, the
// background sweeper's yields to the scheduler) came to about 7% of its
// CPU at C=64; collecting a fifth as often, about 2.5%. So while the live
// heap is under gcHeadroom (from the start on), the heap may grow by
// gcHeadroom before the next cycle (GOGC up to gcMaxPercent); from
// gcHeadroom up, the default pace holds, so that a big result's peak
// memory is what it was: a cycle each time the heap doubles. An idle
// mcpgate allocates next to nothing, so its resident memory does not grow
// with the headroom.
const (
	gcHeadroom       = 16 << 20
	gcDefaultPercent = 100
	gcMaxPercent     = 400
)

// gcPercentFor is the GOGC that lets a heap of live bytes grow by
// gcHeadroom before the next cycle, within [gcDefaultPercent,
// gcMaxPercent].
func gcPercentFor(live uint64) int {
	if live == 0 {
		return gcMaxPercent
	}
	return int(min(gcMaxPercent, max(gcDefaultPercent, uint64(gcHeadroom)*100/live)))
}

var paceGCOnce sync.Once

// paceGC sets the collector's pace after each cycle from the live heap it
// left (see gcHeadroom), unless GOGC or GOMEMLIMIT is set: then the
// operator's choice holds. It runs in the runtime's cleanup goroutine, once
// a cycle, and needs no goroutine of its own.
func paceGC() {
	if os.Getenv("GOGC") != "" || os.Getenv("GOMEMLIMIT") != "" {
		return
	}
	paceGCOnce.Do(func() {
		// From the start, a small heap's pace (the live heap is next to
		// nothing yet). At Go's default pace the first cycle comes at 4
		// MiB, which the default policies' first list reached, and the
		// cycle's own memory (mark bits, work buffers: 0.8 MiB resident)
		// was more than the garbage it freed, which stays resident.
		debug.SetGCPercent(gcPercentFor(0))
		p := &gcPacer{sample: []metrics.Sample{{Name: "/gc/heap/live:bytes"}, {Name: "/gc/gogc:percent"}}}
		p.arm()
	})
}

// gcPacer is paceGC's state, read and written only by the cleanups, which
// the runtime runs one at a time.
type gcPacer struct {
	sample []metrics.Sample // the live heap, and GOGC as it is
}

// gcCycleMark is allocated for each cycle to end: its cleanup runs once a
// cycle has found it unreachable. It holds a pointer so that it is not put
// in a tiny allocator's block, which lives until all its objects die.
type gcCycleMark struct{ _ *byte }

func (p *gcPacer) arm() {
	runtime.AddCleanup(new(gcCycleMark), (*gcPacer).cycleEnded, p)
}

func (p *gcPacer) cycleEnded() {
	metrics.Read(p.sample)
	live, gogc := p.sample[0].Value, p.sample[1].Value
	if live.Kind() == metrics.KindUint64 && gogc.Kind() == metrics.KindUint64 {
		if percent := gcPercentFor(live.Uint64()); uint64(percent) != gogc.Uint64() {
			debug.SetGCPercent(percent)
		}
	}
	p.arm()
}
