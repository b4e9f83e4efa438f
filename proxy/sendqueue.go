package proxy

import (
	"sync"
	"time"

	"github.com/mcpgate/mcpgate/jsonrpc"
)

// sessionQueueBytes bounds what waits to be written to one client.
const sessionQueueBytes = 8 << 20

// sendQueue is the way out to one client: a FIFO of encoded messages in
// front of the client's stream, written by one goroutine. A client that
// stops reading cannot make the gateway's memory grow without bound or
// stall anyone else: what upstreams send on their own (progress, log
// messages, list_changed, resource updates) is dropped when the queue is
// full, and counted; responses and requests wait for room, which holds up
// only that client's own requests. One FIFO for both keeps progress ahead of
// the result it belongs to.
type sendQueue struct {
	jsonrpc.Stream // the client's stream; Write and Close are ours

	mu      sync.Mutex
	wake    *sync.Cond // signalled when msgs grows or shrinks, or on close
	msgs    []queued
	bytes   int
	limit   int
	closed  bool
	writing bool          // someone holds the right to write (the loop, or a caller draining)
	dropped int           // notifications dropped while full, since the last report
	done    chan struct{} // closed when the writer goroutine has returned
	onDrop  func(n int)   // told once per episode of dropping
}

func newSendQueue(s jsonrpc.Stream, limit int, onDrop func(int)) *sendQueue {
	q := &sendQueue{Stream: s, limit: limit, done: make(chan struct{}), onDrop: onDrop}
	q.wake = sync.NewCond(&q.mu)
	go q.writeLoop()
	return q
}

// queued is one message waiting, with the request it belongs to, if any.
type queued struct {
	msg          []byte
	related      jsonrpc.ID
	final        bool
	notification bool // offered: the stream may drop it too
}

// notificationWriter is a stream that may drop a notification it has no
// room for (an HTTP session keeping messages for a GET stream not open),
// where a request or response must wait.
type notificationWriter interface {
	writeNotification(msg []byte, related jsonrpc.ID) error
}

// Write queues a request or notification, waiting for room.
func (q *sendQueue) Write(msg []byte) error {
	return q.WriteRelated(msg, jsonrpc.ID{}, false)
}

// WriteRelated queues a message that belongs to the client's request
// related (a response, when final), waiting for room.
func (q *sendQueue) WriteRelated(msg []byte, related jsonrpc.ID, final bool) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	for !q.closed && len(q.msgs) > 0 && q.bytes+len(msg) > q.limit {
		q.wake.Wait()
	}
	if q.closed {
		return jsonrpc.ErrClosed
	}
	q.push(queued{msg: msg, related: related, final: final})
	if !q.writing {
		// Nobody is writing: write it ourselves rather than wake the loop.
		// A response is written by the goroutine that made it, saving a
		// handoff on every call; the FIFO and the single writer are kept.
		q.drain()
	}
	return nil
}

// offer queues a notification if there is room, and drops it if not.
// related, if valid, is the client request it belongs to.
func (q *sendQueue) offer(msg []byte, related jsonrpc.ID) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed {
		return
	}
	if len(q.msgs) > 0 && q.bytes+len(msg) > q.limit {
		q.dropped++
		if q.dropped == 1 && q.onDrop != nil {
			q.onDrop(q.bytes)
		}
		return
	}
	q.push(queued{msg: msg, related: related, notification: true})
}

func (q *sendQueue) push(m queued) {
	q.msgs = append(q.msgs, m)
	q.bytes += len(m.msg)
	q.wake.Broadcast()
}

func (q *sendQueue) writeLoop() {
	defer close(q.done)
	q.mu.Lock()
	defer q.mu.Unlock()
	for {
		for (len(q.msgs) == 0 || q.writing) && !q.closed {
			q.wake.Wait()
		}
		if q.writing {
			q.wake.Wait() // closed: let the caller that is writing finish
			continue
		}
		if len(q.msgs) == 0 {
			return
		}
		q.drain()
	}
}

// drain writes queued messages in order until none is left, taking the
// right to write. q.mu is held on entry and exit, never across a write.
func (q *sendQueue) drain() {
	q.writing = true
	for len(q.msgs) > 0 {
		m := q.msgs[0]
		q.msgs[0] = queued{}
		q.msgs = q.msgs[1:]
		q.mu.Unlock()
		var err error
		nw, dropper := q.Stream.(notificationWriter)
		rw, related := q.Stream.(jsonrpc.RelatedWriter)
		switch {
		case m.notification && dropper:
			err = nw.writeNotification(m.msg, m.related)
		case related && m.related.IsValid():
			err = rw.WriteRelated(m.msg, m.related, m.final)
		case m.msg != nil:
			err = q.Stream.Write(m.msg)
		}
		q.mu.Lock()
		q.bytes -= len(m.msg)
		if err != nil {
			q.closed = true
			q.msgs, q.bytes = nil, 0
		}
		q.wake.Broadcast()
	}
	q.dropped = 0 // the episode, if any, is over
	q.writing = false
	q.wake.Broadcast()
}

// Close stops taking messages, gives the writer up to grace to deliver what
// is queued (the answers to the last requests), then closes the stream.
func (q *sendQueue) Close() error {
	q.closeWithin(2 * time.Second)
	return nil
}

func (q *sendQueue) closeWithin(grace time.Duration) {
	q.mu.Lock()
	q.closed = true
	q.wake.Broadcast()
	q.mu.Unlock()
	select {
	case <-q.done:
	case <-time.After(grace):
	}
	q.Stream.Close() // unblocks a write stuck on a client that stopped reading
}
