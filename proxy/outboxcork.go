package proxy

import (
	"github.com/mcpgate/mcpgate/jsonrpc"
)

// An outbox held by a reader's cork (see jsonrpc.Cork, outbox.WriteNoWait)
// is flushed when that reader is about to read again: the messages queued
// meanwhile go out in one write, on the reader's goroutine, when the peer
// has room for them; else the writer goroutine writes them, as it does
// what tryInline cannot.

// corkable reports whether messages for the stream may wait for a cork:
// only when the flush can write them together without waiting. q.mu held.
func (q *outbox) corkable() bool {
	_, ok := q.Stream.(jsonrpc.TryLinesWriter)
	return ok
}

// FlushCork writes what is queued, if nobody else is writing it.
func (q *outbox) FlushCork() {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.heldBy = nil
	if q.writing || len(q.msgs) == 0 || q.closed {
		// Whoever writes takes it; a closed outbox's writer delivers it.
		return
	}
	q.tryInlineLines()
}

// tryInlineLines writes the plain messages at the front of the queue in
// one write, on the caller's goroutine, if the stream can take them
// without waiting; what it cannot is left for the writer goroutine, the
// rest of a message begun at the front. q.mu held, nobody writing.
func (q *outbox) tryInlineLines() {
	n, size := 0, 0
	for n < len(q.msgs) && n < maxBatchMessages {
		m := &q.msgs[n]
		if !q.plain(m) || size+len(m.msg) > maxBatchBytes {
			break
		}
		size += len(m.msg) + 1
		n++
	}
	if n == 0 {
		q.signal()
		return
	}
	q.lines = q.lines[:0]
	for i := range n {
		q.lines = append(q.lines, q.msgs[i].msg)
	}
	q.writing = true // the messages stay at the front meanwhile
	q.mu.Unlock()
	whole, rest, err := q.Stream.(jsonrpc.TryLinesWriter).TryWriteLines(q.lines)
	q.mu.Lock()
	clear(q.lines)
	q.writing = false
	if err != nil {
		q.closed = true
		q.msgs, q.store, q.bytes, q.once = nil, nil, 0, nil
	} else {
		q.popWritten(whole)
		if len(rest) > 0 {
			m := &q.msgs[0]
			q.bytes -= len(m.msg) - len(rest)
			q.forgetOnce(m) // begun: a notice after it says something new
			m.msg, m.rest = rest, true
		}
	}
	q.afterCallersWrite()
}

// popWritten takes the first n messages, written, off the queue. q.mu held.
func (q *outbox) popWritten(n int) {
	for i := range n {
		m := &q.msgs[i]
		q.bytes -= m.size()
		q.forgetOnce(m)
		*m = queued{}
	}
	q.msgs = q.msgs[n:]
}

// forgetOnce gives back a coalesced notice's count (see offerOnce) once
// it is written, or begun: its rest no longer reads as the notice. q.mu
// held.
func (q *outbox) forgetOnce(m *queued) {
	if !m.once {
		return
	}
	m.once = false
	if q.once[string(m.msg)]--; q.once[string(m.msg)] <= 0 {
		delete(q.once, string(m.msg))
	}
}

// BeforeRead passes the reader's hook on to the stream (see
// jsonrpc.ReadAheadStream): the outbox hides it.
func (q *outbox) BeforeRead(f func()) bool {
	ra, ok := q.Stream.(jsonrpc.ReadAheadStream)
	return ok && ra.BeforeRead(f)
}

// TryWriteLines and BeforeRead pass the line stream's on (see
// jsonrpc.TryLinesWriter, jsonrpc.ReadAheadStream).
func (p *process) TryWriteLines(msgs [][]byte) (int, []byte, error) {
	if tw, ok := p.Stream.(jsonrpc.TryLinesWriter); ok {
		return tw.TryWriteLines(msgs)
	}
	return 0, nil, nil
}

func (p *process) BeforeRead(f func()) bool {
	ra, ok := p.Stream.(jsonrpc.ReadAheadStream)
	return ok && ra.BeforeRead(f)
}
