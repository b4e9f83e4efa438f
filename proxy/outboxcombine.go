package proxy

import "runtime"

// Requests that HTTP POSTs send to one server at once share a write. Each
// POST runs on a goroutine of its own and, its call inlined (see
// httpinline.go), writes its request to the server itself, without a cork:
// a stdio client's reader corks what it relays from one read
// (jsonrpc.Cork), but POSTs come one per connection, so at C=64 each went
// in a write of its own, and the server woke for each. net/http wakes the
// POSTs whose requests came in one poll together, and the server's reader
// wakes the POSTs it answers together: they are runnable at the same time.
// So the POST that finds the server's queue idle claims the write, lets
// the goroutines ready to run go first (one yield, not a wait: with
// nothing else runnable, as at C=1, it returns at once), and then writes
// its request with those they queued meanwhile, in one write
// (tryInlineLines), as the holder of a cork would. At C=64 (perf stat of
// BenchmarkPerfHTTP's mcpgate) the writes to the server fell from about
// 0.8 a call to 0.1, and mcpgate's CPU a call by about a twentieth
// (BenchmarkPerfCallTurns: 1.39 times the HTTP relay floor's, 1.33 after).

// writeAfterYield writes the one message queued, a request from a
// goroutine with no cork, after a yield, with whatever joined it
// meanwhile. q.mu held, nobody writing. The queue is claimed for the
// yield (q.writing), so that the others' messages wait for this write
// (see writeNoWaitLocked) rather than go out alone; nothing is held across
// it.
func (q *outbox) writeAfterYield() {
	q.writing = true // the message stays at the front meanwhile
	yield := q.yieldToReady
	q.mu.Unlock()
	if yield != nil {
		yield()
	} else {
		runtime.Gosched() // the goroutines ready to run go first
	}
	q.mu.Lock()
	q.writing = false
	if q.closed || len(q.msgs) == 0 {
		q.wake.Signal() // closed meanwhile: the writer goroutine delivers what is queued, within its grace
		return
	}
	queued := len(q.msgs)
	q.tryInlineLines()
	if len(q.msgs) < queued {
		q.budget.written++ // progress, for callers waiting for room (outboxbudget.go)
	}
}
