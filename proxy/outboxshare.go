package proxy

import "sync/atomic"

// Each client's queue is bounded (sessionQueueBytes), but a session whose
// stream is open and not read holds its 8 MiB of notifications until a
// write to it times out (a minute over HTTP): 1,000 such sessions would
// hold 8 GiB. So what all client queues hold beyond a small floor each is
// bounded for all of them together. A session within its floor, as one
// whose client reads always is, never meets the shared bound; past it, a
// notification that would take a session beyond its floor is dropped as
// one that finds its own queue full is (logged once per episode). Past
// half the bound, so is one that would take a session holding at least
// the average beyond its floor: the sessions holding the most (those not
// read) lose what comes for them, while one holding little (a client that
// reads, in a burst) still gets its own until the bound is met.
type outboxShare struct {
	over    atomic.Int64 // bytes charged: what client queues hold beyond their floors
	holders atomic.Int64 // client queues with bytes charged
}

const (
	// clientQueueFloor is what a client's queue may hold whatever the
	// others hold: room for a burst of progress and log messages.
	clientQueueFloor = 256 << 10
	// clientQueuesBeyondFloors bounds what all client queues hold beyond
	// their floors together: sixteen queues full.
	clientQueuesBeyondFloors = 16 * sessionQueueBytes
)

// shareOutbox makes s's queue count against the bound all client queues
// share.
func (s *session) shareOutbox() {
	s.out.mu.Lock()
	s.out.share = &s.g.clientOutboxes
	s.out.mu.Unlock()
}

// sharedRoom reports whether n more bytes fit in q as far as the bound all
// client queues share goes, and charges them to it. q.mu held.
func (q *outbox) sharedRoom(n int) bool {
	if q.share == nil {
		return true
	}
	want := q.bytes + n - clientQueueFloor - q.charged
	if want <= 0 {
		return true
	}
	over := q.share.over.Add(int64(want))
	if over > clientQueuesBeyondFloors || over > clientQueuesBeyondFloors/2 && int64(q.charged) >= over/max(1, q.share.holders.Load()) {
		q.share.over.Add(-int64(want))
		return false
	}
	if q.charged == 0 {
		q.share.holders.Add(1)
	}
	q.charged += want
	return true
}

// giveBack returns to the shared bound what q no longer holds beyond its
// floor: called wherever the queue shrinks (writes, a closed stream).
// q.mu held.
func (q *outbox) giveBack() {
	if q.charged == 0 {
		return
	}
	if beyond := max(0, q.bytes-clientQueueFloor); beyond < q.charged {
		q.share.over.Add(int64(beyond - q.charged))
		q.charged = beyond
		if beyond == 0 {
			q.share.holders.Add(-1)
		}
	}
}
