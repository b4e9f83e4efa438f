package proxy

import (
	"bytes"
	"context"
	"sync"
	"time"

	"github.com/mcpgate/mcpgate/jsonrpc"
)

// Bounds on what waits to be written to one peer.
const (
	sessionQueueBytes  = 8 << 20 // to one client
	upstreamQueueBytes = 8 << 20 // to one upstream
)

// outbox is the way out to one peer: a FIFO of encoded messages in front of
// its stream, written by one writer at a time. A peer that stops reading
// cannot make the gateway's memory grow without bound or stall anyone else:
// notifications that do not fit (progress, log messages, list_changed,
// resource updates, cancellations) are dropped and counted; requests and
// responses wait for room, each within its caller's context. One FIFO for
// everything keeps progress ahead of the result it belongs to.
//
// Who writes differs by side. Toward a client (inline), a message is
// written by the goroutine that queued it when nobody else is writing,
// saving a handoff on every response; a client that stops reading holds up
// only its own requests. Toward an upstream, one goroutine writes
// everything, so that a caller whose deadline passes can walk away while
// its message is still being written to a server that stopped reading: the
// deadline covers the whole request, and half a message is never sent.
type outbox struct {
	jsonrpc.Stream // the peer's stream; Write and Close are ours

	inline bool
	limit  int
	onDrop func(queued int) // told once per episode of dropping, without q.mu held (it logs)
	grace  time.Duration    // how long Close lets the writer deliver what is queued

	mu      sync.Mutex
	wake    *sync.Cond // the writer goroutine's (see below)
	room    *sync.Cond // callers waiting for room: broadcast when the queue shrinks, or on close
	msgs    []queued
	store   []queued // the array msgs is a window of: refilled from its start when msgs empties
	bytes   int
	closed  bool
	writing bool           // someone holds the right to write (the loop, or a caller draining)
	dropped int            // notifications dropped while full, since the last report
	once    map[string]int // coalesced notifications queued, by content
	done    chan struct{}  // closed when the writer goroutine has returned
	wakes   int            // times the writer goroutine woke (see TestOutboxWriterSleepsWhileCallersWrite)
	budget  answerBudget   // bounds what waits for room too (see outboxbudget.go)
	heldBy  *jsonrpc.Cork  // the reader's cork that flushes what is queued (see WriteNoWait); nil: none
	share   *outboxShare   // the bound all client queues share (see outboxshare.go); nil: none
	charged int            // of bytes, what is charged to share

	batch []queued // what drain is writing; held by whoever writes
	lines [][]byte // the same, for WriteLines
	arena []byte   // where EncodeNoWait encodes (see outboxencode.go)
}

func newOutbox(s jsonrpc.Stream, limit int, inline bool, grace time.Duration, onDrop func(int)) *outbox {
	q := &outbox{Stream: s, limit: limit, inline: inline, grace: grace, done: make(chan struct{}), onDrop: onDrop}
	q.wake = sync.NewCond(&q.mu)
	q.room = sync.NewCond(&q.mu)
	go q.writeLoop()
	return q
}

// The writer goroutine is woken (wake) when there is a message for it, one
// that no caller is writing or will write, when a caller's write that left
// some ends, and on close; never when a caller writes its own message:
// each such wake-up was a handoff on every request and every answer.

// queued is one message waiting, with the request it belongs to, if any.
type queued struct {
	msg          []byte
	parts        [][]byte // instead of msg: a message in parts (see jsonrpc.PartsWriter)
	rest         bool     // msg is what a TryWrite left of a message (see tryInline)
	related      jsonrpc.ID
	final        bool
	once         bool // coalesced: counted in outbox.once
	notification bool // offered: the stream may drop it too
}

// NotificationWriter is implemented by a client stream that keeps messages
// for later and may have no room for one (an HTTP session keeping what
// belongs to no request until the client opens its GET stream): the
// gateway then hands it notifications through WriteNotification, which
// may drop one; requests and responses come through Write and
// WriteRelated, which must never drop a response (requests kept for later
// may be dropped, oldest first, past a bound: their callers end at their
// own deadlines). related, if valid, is the client's request the
// notification belongs to.
type NotificationWriter interface {
	WriteNotification(msg []byte, related jsonrpc.ID) error
}

// Write queues a request or notification, waiting within ctx for room.
func (q *outbox) Write(ctx context.Context, msg []byte) error {
	return q.WriteRelated(ctx, msg, jsonrpc.ID{}, false)
}

// WriteRelated queues a message that belongs to the peer's request related
// (a response, when final), waiting within ctx for room. Once queued it is
// sent: a caller that gives up later says so with a cancellation.
func (q *outbox) WriteRelated(ctx context.Context, msg []byte, related jsonrpc.ID, final bool) error {
	return q.enqueue(ctx, queued{msg: msg, related: related, final: final})
}

// WriteParts queues a message given in parts (a big result, which is not
// copied), as WriteRelated does.
func (q *outbox) WriteParts(ctx context.Context, parts [][]byte, related jsonrpc.ID, final bool) error {
	return q.enqueue(ctx, queued{parts: parts, related: related, final: final})
}

func (q *outbox) enqueue(ctx context.Context, m queued) error {
	size := m.size()
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.full(size) && !q.closed {
		if !q.writing {
			q.wake.Signal() // what a cork holds (see WriteNoWait) must not wait for its flush now
		}
		var refused error
		if m, size, refused = q.waitForRoom(ctx, m, size); refused != nil {
			return refused
		}
	}
	if q.closed {
		return jsonrpc.ErrClosed
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	q.push(m)
	switch {
	case q.writing:
		// Whoever writes takes it: drain writes until the queue is empty,
		// and a tryInline that leaves messages wakes the writer goroutine.
	case q.inline:
		q.drain()
	case len(q.msgs) == 1 && m.parts == nil:
		q.tryInline()
	default:
		q.wake.Signal()
	}
	return nil
}

// WriteNoWait queues a request or response if there is room, without
// waiting (see jsonrpc.NoWaitWriter), for a caller that must not wait (a
// reader goroutine finishing a call): it writes it at once when nobody
// else is writing and the stream can take it (tryInline), else the
// writer goroutine does. taken is false when the queue is full.
//
// With a reader's cork (see jsonrpc.Cork), the message waits in the queue
// until the cork is flushed, when the reader is about to read again: the
// messages it relays from one read of its peer then go out in one write.
// While a cork holds the queue, any caller's message joins them.
func (q *outbox) WriteNoWait(msg []byte, related jsonrpc.ID, final bool, cork *jsonrpc.Cork) (taken bool, err error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.writeNoWaitLocked(msg, related, final, cork)
}

// writeNoWaitLocked is WriteNoWait with q.mu held.
func (q *outbox) writeNoWaitLocked(msg []byte, related jsonrpc.ID, final bool, cork *jsonrpc.Cork) (taken bool, err error) {
	if q.closed {
		return false, jsonrpc.ErrClosed
	}
	if q.full(len(msg)) {
		return false, nil
	}
	q.push(queued{msg: msg, related: related, final: final})
	switch {
	case q.writing:
		// Whoever writes takes it (see enqueue).
	case q.heldBy != nil:
		// Flushed with the others.
	case cork != nil && len(q.msgs) == 1 && q.corkable():
		q.heldBy = cork
		cork.Hold(q)
	case len(q.msgs) == 1:
		q.tryInline()
	default:
		q.wake.Signal()
	}
	return true, nil
}

// tryInline writes the one message queued, which nobody is writing, on
// the caller's goroutine if the stream can take it without waiting (see
// jsonrpc.TryWriter): toward a server whose stdin has room, the usual
// case, a request then costs no handoff to the writer goroutine and no
// wake-up. What cannot go out at once, whole or in part, is left at the
// front of the queue for the writer goroutine, so a server that stopped
// reading still holds up no caller past its deadline, and the rest of a
// message started is written before anything else. q.mu held.
func (q *outbox) tryInline() {
	tw, ok := q.Stream.(jsonrpc.TryWriter)
	if !ok {
		if !q.tryAnswer() { // an HTTP POST's answer (see httpinline.go)
			q.wake.Signal()
		}
		return
	}
	m := q.msgs[0]
	q.writing = true // the message stays at the front meanwhile
	q.mu.Unlock()
	written, rest, err := tw.TryWrite(m.msg)
	q.mu.Lock()
	q.writing = false
	switch {
	case err != nil:
		q.closed = true
		q.msgs, q.store, q.bytes, q.once = nil, nil, 0, nil
	case !written:
	case len(rest) > 0:
		q.msgs[0].msg, q.msgs[0].rest = rest, true
		q.bytes -= len(m.msg) - len(rest)
		q.budget.written++
	default:
		q.popWritten(1)
		q.budget.written++
	}
	q.afterCallersWrite()
}

// full reports whether a message of n bytes must wait. One message larger
// than the bound still goes when the queue is empty. q.mu held.
func (q *outbox) full(n int) bool { return len(q.msgs) > 0 && q.bytes+n > q.limit }

// offer queues a notification if there is room, and drops it if not.
// related, if valid, is the peer's request it belongs to. It never waits.
func (q *outbox) offer(msg []byte, related jsonrpc.ID) {
	q.mu.Lock()
	_, report := q.offerLocked(queued{msg: msg, related: related, notification: true})
	q.mu.Unlock()
	report()
}

// afterCallersWrite tells the others what a caller's write changed: the
// room it made, and the writer goroutine what is left or came meanwhile,
// or that it is to end. q.mu held.
func (q *outbox) afterCallersWrite() {
	q.giveBack()
	q.room.Broadcast()
	if len(q.msgs) > 0 || q.closed {
		q.wake.Signal()
	}
}

// offerOnce is offer for a notification that says a state changed
// (roots/list_changed): while one such is queued and not yet written,
// another would say nothing new, so a flood of them costs one message.
func (q *outbox) offerOnce(msg []byte) {
	q.mu.Lock()
	if q.once[string(msg)] > 0 {
		q.mu.Unlock()
		return
	}
	ok, report := q.offerLocked(queued{msg: msg, once: true, notification: true})
	if ok {
		if q.once == nil {
			q.once = map[string]int{}
		}
		q.once[string(msg)]++
	}
	q.mu.Unlock()
	report()
}

// offerLocked queues m if there is room. report, to be called once q.mu is
// released, tells onDrop when this drop began an episode: reporting logs,
// and nothing is written while a lock is held.
func (q *outbox) offerLocked(m queued) (ok bool, report func()) {
	if q.closed {
		return false, func() {}
	}
	if q.full(len(m.msg)) || !q.sharedRoom(len(m.msg)) {
		q.dropped++
		if q.dropped == 1 && q.onDrop != nil {
			queued := q.bytes
			return false, func() { q.onDrop(queued) }
		}
		return false, func() {}
	}
	q.push(m) // the writer goroutine takes it: an offer never writes, so it never waits
	if !q.writing {
		q.wake.Signal() // else whoever writes takes it (see enqueue)
	}
	return true, func() {}
}

func (q *outbox) push(m queued) {
	if len(q.msgs) == 0 {
		q.msgs = q.store[:0] // popping moved the window forward: start again at the front
	}
	before := cap(q.msgs)
	q.msgs = append(q.msgs, m)
	if cap(q.msgs) != before {
		q.store = q.msgs[:0] // a new array
	}
	q.bytes += m.size()
}

// size is how many bytes m takes.
func (m *queued) size() int {
	n := len(m.msg)
	for _, p := range m.parts {
		n += len(p)
	}
	return n
}

func (q *outbox) writeLoop() {
	defer close(q.done)
	q.mu.Lock()
	defer q.mu.Unlock()
	for {
		for (len(q.msgs) == 0 || q.writing) && !q.closed {
			q.wake.Wait()
			q.wakes++
		}
		if q.writing {
			q.wake.Wait() // closed: let the caller that is writing finish
			continue
		}
		if len(q.msgs) == 0 {
			q.giveBack()
			return
		}
		q.drain()
	}
}

// drain writes queued messages in order until none is left, taking the
// right to write. q.mu is held on entry and exit, never across a write.
func (q *outbox) drain() {
	q.writing = true
	for len(q.msgs) > 0 {
		batch := q.takeBatch()
		q.mu.Unlock()
		size := 0
		for i := range batch {
			size += batch[i].size()
		}
		var err error
		if len(batch) == 1 {
			err = q.send(batch[0])
		} else {
			q.lines = q.lines[:0]
			for _, m := range batch {
				q.lines = append(q.lines, m.msg)
			}
			err = q.Stream.(jsonrpc.LinesWriter).WriteLines(context.Background(), q.lines)
			clear(q.lines)
		}
		clear(batch)
		q.mu.Lock()
		q.bytes -= size
		q.budget.written++
		if err != nil {
			q.closed = true
			q.msgs, q.store, q.bytes, q.once = nil, nil, 0, nil
		}
		q.giveBack()
		q.room.Broadcast()
	}
	q.dropped = 0 // the episode, if any, is over
	q.budget.released = 0
	q.writing = false
	if q.closed {
		q.wake.Signal() // the writer goroutine waits for the write to end, to end itself
	}
}

// Bounds on the messages written together in one write (see takeBatch).
const (
	maxBatchMessages = 64
	maxBatchBytes    = 64 << 10
)

// takeBatch takes the message at the front of the queue, and the small
// ones that follow it when the stream can write them together
// (jsonrpc.LinesWriter): when answers pile up behind a write, they then go
// out in one write, not one each. q.mu held; the batch is valid until the
// next call.
func (q *outbox) takeBatch() []queued {
	_, lines := q.Stream.(jsonrpc.LinesWriter)
	n, bytes := 0, 0
	for n < len(q.msgs) && n < maxBatchMessages {
		m := &q.msgs[n]
		if n > 0 && (!lines || !q.plain(m) || !q.plain(&q.msgs[0]) || bytes+len(m.msg) > maxBatchBytes) {
			break
		}
		bytes += m.size()
		n++
	}
	q.batch = append(q.batch[:0], q.msgs[:n]...)
	for i := range n {
		q.msgs[i] = queued{}
		if m := q.batch[i]; m.once {
			if q.once[string(m.msg)]--; q.once[string(m.msg)] <= 0 {
				delete(q.once, string(m.msg))
			}
		}
	}
	q.msgs = q.msgs[n:]
	return q.batch
}

// plain reports whether m is written with the stream's Write (not in
// parts, not routed by request, not offered to a stream that may drop
// it), and so may share a write with others.
func (q *outbox) plain(m *queued) bool {
	if m.parts != nil || m.rest || m.msg == nil {
		return false
	}
	if _, ok := q.Stream.(NotificationWriter); ok && m.notification {
		return false
	}
	if _, ok := q.Stream.(jsonrpc.RelatedWriter); ok && m.related.IsValid() {
		return false
	}
	return true
}

// send writes one queued message to the stream. q.mu is not held.
func (q *outbox) send(m queued) error {
	if m.rest {
		return q.Stream.(jsonrpc.TryWriter).WriteRest(context.Background(), m.msg)
	}
	if m.parts != nil {
		if pw, ok := q.Stream.(jsonrpc.PartsWriter); ok {
			return pw.WriteParts(context.Background(), m.parts, m.related, m.final)
		}
		m.msg = bytes.Join(m.parts, nil)
	}
	nw, dropper := q.Stream.(NotificationWriter)
	rw, related := q.Stream.(jsonrpc.RelatedWriter)
	switch {
	case m.notification && dropper:
		return nw.WriteNotification(m.msg, m.related)
	case related && m.related.IsValid():
		return rw.WriteRelated(context.Background(), m.msg, m.related, m.final)
	case m.msg != nil:
		return q.Stream.Write(context.Background(), m.msg)
	}
	return nil
}

// Close stops taking messages, gives the writer up to its grace to deliver
// what is queued (the answers to the last requests, the last
// cancellations), then closes the stream.
func (q *outbox) Close() error {
	q.mu.Lock()
	q.closed = true
	q.wake.Broadcast()
	q.room.Broadcast()
	q.mu.Unlock()
	t := time.NewTimer(q.grace)
	defer t.Stop()
	select {
	case <-q.done:
	case <-t.C:
	}
	return q.Stream.Close() // unblocks a write stuck on a peer that stopped reading
}

// Bounds on the requests a peer may have in flight at once (see
// jsonrpc.Options.MaxInFlight): past them a request is refused at once.
const (
	// A client: generous, for agents that run many tools at once.
	maxClientRequests     = 1024
	maxClientRequestBytes = 256 << 20
	// An upstream's requests to the client side (sampling, elicitation,
	// roots): each waits for a person or a model, so few are ever real.
	maxServerRequests     = 64
	maxServerRequestBytes = 64 << 20
)
