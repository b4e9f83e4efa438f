package proxy

import "sync"

// An inline call's state (inlineCall, its deadline and its audit record:
// about 800 bytes) was most of what a tools/call allocated, and the
// collector's work, the sweeper's above all, grows with the bytes. So it
// is reused, under one rule: it goes back to the pool only from the
// server's reader that answered the call itself, without an error, and
// only when nothing else can still reach it:
//
//   - the request went out on the client's reader (sentHere): no goroutine
//     of ours holds it after sending, and its jsonrpc.Call is the state's
//     own (upCall), taken out of the connection's pending calls by the
//     answer; nothing keeps its id (the caller's upID is the state's too,
//     and the call was not abandoned: an abandoned call ends in an error);
//   - the call's Then hook is the one that answered (Completed), and it
//     runs once: the jsonrpc.Call is done with it;
//   - the reply's end hook (Ended) has returned: Answer ends the request's
//     context and tells it on the way, unless a cancellation told it
//     first, and that one may still be running;
//   - its deadline ended without firing, and no sweep of the wheel holds
//     it (taken: a sweep takes a deadline out of the wheel, then passes it
//     outside the wheel's lock, after end may have disarmed it), and no
//     context of the context package was made from it (slow), which a
//     wait elsewhere could hold;
//   - no server request took it as its cause (caller.named), which would
//     hold and release the deadline after the answer.
//
// Anything else is left to the collector, as before. The deadline's seq
// is kept across uses all the same, so that an arming of a former use
// can never match a current one.
//
// The buffer its renamed params were spliced into is kept too, up to
// maxKeptRenamed: the audit record, its only other reader, is written
// (encoded, when queued) before the answer.
var inlineCalls = sync.Pool{New: func() any { return new(inlineCall) }}

// maxKeptRenamed bounds the params buffer a pooled inline call keeps: a
// tools/call's params are usually well under it, and the pool must not
// hold big ones.
const maxKeptRenamed = 4 << 10

func newInlineCall() *inlineCall { return inlineCalls.Get().(*inlineCall) }

// recycleAnswered is recycle after the call was answered on this
// goroutine (see Completed), when the rule above allows it.
func (ic *inlineCall) recycleAnswered() {
	if !ic.sentHere || !ic.endTold.Load() || ic.caller == nil || ic.named {
		return
	}
	d := &ic.deadline
	d.mu.Lock()
	quiet := !d.fired && d.slow == nil && d.ended && d.taken.Load() == 0
	seq := d.seq
	d.mu.Unlock()
	if quiet {
		ic.recycleFrom(seq)
	}
}

// recycle puts ic back in the pool; nothing may hold it.
func (ic *inlineCall) recycle() {
	d := &ic.deadline
	d.mu.Lock()
	seq := d.seq
	d.mu.Unlock()
	ic.recycleFrom(seq)
}

// recycleFrom is recycle with the deadline's seq read (under its lock)
// already: nothing arms a deadline that is quiet.
func (ic *inlineCall) recycleFrom(seq uint64) {
	renamed, stripped := ic.renamed[:0], ic.stripped[:0]
	if cap(renamed) > maxKeptRenamed {
		renamed = nil
	}
	if cap(stripped) > maxKeptRenamed {
		stripped = nil
	}
	*ic = inlineCall{}
	ic.deadline.seq = seq
	ic.renamed, ic.stripped = renamed, stripped
	inlineCalls.Put(ic)
}
