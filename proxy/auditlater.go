package proxy

import (
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// Audit records written off a connection's reader. An inline call (see
// inline.go) is finished on its server's reader goroutine, which must not
// wait: while it does, that server's answers wait for everyone. Appending
// a record usually does not (a write to the page cache), but it can: a
// rotation (a rename and an fsync), another mcpgate process holding the
// trail's lock (up to 5 s), another append doing either. So an inline
// call's record is appended on the reader only when nothing stands in the
// way (auditchain.Writer.TryAppend); otherwise it is queued for a writer
// goroutine of the trail's, which appends queued records in order. Close
// writes what is queued before the file closes: nothing is lost on
// shutdown. A record appended elsewhere while some are queued (an event, a
// request served on a goroutine) joins the queue and waits for its turn:
// the trail keeps the order in which things happened.
//
// The queue is bounded by the places reserved in it: a call takes one
// before it commits to finishing on the reader (reserveLater), and keeps
// it until its record is written; without one it finishes on a goroutine
// of its own, where its record is appended as usual. A record waiting its
// turn (see appendInOrder) takes no place: its caller waits with it. An inline call's
// params and result are under inlineMaxSize each, so the queue holds at
// most auditLaterRecords × about 130 KiB (8.3 MiB); records are much
// smaller without audit.include_bodies.
//
// A record queued leaves after its answer: a crash of mcpgate (not a
// shutdown) while the trail is stalled loses what is queued. With
// audit.sync "always" nothing is queued: those calls never finish on a
// reader (see auditNeverWaits).
const auditLaterRecords = 64

type auditLater struct {
	places atomic.Int64 // reserved: records queued, or still to be written by their calls
	queued atomic.Int64 // records in the queue: while any are, TryAppend would pass them

	mu      sync.Mutex
	records []laterRecord // oldest first
	closed  bool          // Close has begun: records are appended by their callers

	turnWait time.Duration // how long a record appended in order waits for its turn (see appendInOrder)

	wake chan struct{} // 1-buffered: a record was queued
	stop chan struct{} // closed by close
	done chan struct{} // closed when the writer goroutine has ended
}

// laterRecord is a record queued, encoded and redacted.
type laterRecord struct {
	line    []byte
	written chan struct{} // closed once written, for a caller that waits; nil: its place was reserved
}

func (a *auditLog) startLater() {
	a.later = &auditLater{turnWait: auditTurnWait, wake: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
	go a.writeLater()
}

// reserveLater takes a place for rec in the queue, so that writing it
// never waits: false when there is none (the call's record must then be
// written where waiting is fine). No trail: nothing to reserve.
func (g *Gateway) reserveLater(rec *auditRecord) bool {
	if g.audit == nil {
		return true
	}
	l := g.audit.later
	if l.places.Add(1) > auditLaterRecords {
		l.places.Add(-1)
		return false
	}
	rec.later = true
	return true
}

// appendLater appends line (encoded, redacted) of a record whose place is
// reserved: at once if nothing stands in the way, else by the writer
// goroutine. It never waits.
func (a *auditLog) appendLater(line []byte) {
	l := a.later
	if l.queued.Load() == 0 {
		if res, done := a.w.TryAppend(line); done {
			l.places.Add(-1)
			a.report(res)
			return
		}
	}
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		a.report(a.w.Append(line)) // at shutdown only: nothing else will write it
		l.places.Add(-1)
		return
	}
	l.records = append(l.records, laterRecord{line: line})
	l.queued.Add(1)
	l.mu.Unlock()
	l.poke()
}

// auditTurnWait bounds how long a record waits for its turn behind those
// queued: they are written in milliseconds unless the trail is stalled
// (another process holding its lock, up to 5 s a record). Then the record
// is appended out of turn, as it was before records were queued, rather
// than hold up its request behind every record queued.
const auditTurnWait = time.Second

// appendInOrder appends line (encoded, redacted) of a record whose caller
// may wait: at once, unless records are queued, behind which it waits
// its turn (within turnWait).
func (a *auditLog) appendInOrder(line []byte) {
	l := a.later
	if l != nil && l.queued.Load() > 0 {
		l.mu.Lock()
		if !l.closed && l.queued.Load() > 0 {
			written := make(chan struct{})
			l.records = append(l.records, laterRecord{line: line, written: written})
			l.queued.Add(1)
			l.mu.Unlock()
			l.poke()
			if !l.awaitTurn(written) {
				a.report(a.w.Append(line)) // out of turn: the trail is stalled
			}
			return
		}
		l.mu.Unlock()
	}
	a.report(a.w.Append(line))
}

// awaitTurn waits until the writer goroutine has written the record
// written belongs to, or for turnWait: false when the record is then
// still queued, and is taken out of the queue for its caller to append.
func (l *auditLater) awaitTurn(written chan struct{}) bool {
	t := time.NewTimer(l.turnWait)
	defer t.Stop()
	select {
	case <-written:
		return true
	case <-t.C:
	}
	l.mu.Lock()
	i := slices.IndexFunc(l.records, func(r laterRecord) bool { return r.written == written })
	if i >= 0 {
		l.records = slices.Delete(l.records, i, i+1)
		l.queued.Add(-1)
	}
	l.mu.Unlock()
	if i >= 0 {
		return false
	}
	<-written // the writer goroutine is writing it, and only it
	return true
}

// poke wakes the writer goroutine.
func (l *auditLater) poke() {
	select {
	case l.wake <- struct{}{}:
	default:
	}
}

// cancelLater gives back a place reserved for a record that will not be
// written (it could not be encoded).
func (a *auditLog) cancelLater() { a.later.places.Add(-1) }

// writeLater is the writer goroutine: it appends queued records in order
// until close, and what is queued then.
func (a *auditLog) writeLater() {
	l := a.later
	defer close(l.done)
	for {
		select {
		case <-l.wake:
		case <-l.stop:
		}
		for {
			// One record at a time: one still queued can be taken back by
			// its caller (awaitTurn), which waits then for nothing but its
			// own append, not for a batch the writer took with it.
			l.mu.Lock()
			if len(l.records) == 0 {
				l.records = nil
				closed := l.closed
				l.mu.Unlock()
				if closed {
					return
				}
				break
			}
			r := l.records[0]
			l.records[0] = laterRecord{}
			l.records = l.records[1:]
			l.mu.Unlock()
			a.report(a.w.Append(r.line))
			l.queued.Add(-1)
			if r.written != nil {
				close(r.written)
			} else {
				l.places.Add(-1)
			}
		}
	}
}

// closeLater writes what is queued and ends the writer goroutine.
func (a *auditLog) closeLater() {
	l := a.later
	if l == nil {
		return
	}
	l.mu.Lock()
	l.closed = true
	l.mu.Unlock()
	close(l.stop)
	<-l.done
}
