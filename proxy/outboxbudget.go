package proxy

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/mcpgate/mcpgate/jsonrpc"
)

// answerBudget bounds the bytes of messages that wait for a client that
// does not read: those queued in its outbox and those waiting for room
// there. The queue alone is bounded (sessionQueueBytes), but a response
// that finds it full waits for room holding its bytes, and a client that
// stops reading would otherwise make each of its requests in flight hold
// its answer: up to 1,024 of them, whatever their size.
//
// Bytes alone cannot tell a client that stopped reading from one that
// reads but has many big answers arriving at once: a message past the
// budget waits as any does while the client reads (a write to it
// completes at least every clientStuckAfter). Once none has for that long,
// the client is stuck: an answer past the budget is released and a small
// error takes its place (it waits as any answer does), so that the request
// is still answered and the client learns why once it reads again; a
// request to the client (sampling, elicitation, roots) fails. Until a write
// completes, messages past the budget are released at once. Whatever the
// client does, what waits for it never passes answerHardFactor times the
// budget: past that, an answer is released at once, so that a client
// cannot make the gateway hold more in the time it takes to find it stuck
// (a client that reads gets that much room beyond the budget). Closing the
// connection instead would end a stdio client's only session, and all its
// other requests, for being slow once. The first answer released in an
// episode is logged; the episode ends when the queue empties.
type answerBudget struct {
	limit    int                                       // 0: no bound (toward an upstream: its callers' deadlines bound it)
	waiting  int                                       // bytes of messages waiting for room in the queue
	released int                                       // answers released since the queue last emptied
	onStuck  func(released jsonrpc.ID, size, held int) // told of an episode's first, without q.mu held (it logs)
	written  uint64                                    // writes to the stream that completed: the client reads
	stuck    bool                                      // found stuck when written was stuckAt: stuck until a write completes
	stuckAt  uint64
}

// clientStuckAfter is how long a client past its budget may go without a
// write to it completing before it is treated as stuck: long enough for a
// client that reads, on a machine so busy that it gets little CPU, to take
// a message of max_message_bytes (5 s was not, under the race detector).
// Until then what is past the budget waits: a stuck client costs the
// budget plus what arrives for it meanwhile.
const clientStuckAfter = 30 * time.Second

// answerHardFactor times a client's budget is the most that ever waits for
// it (see answerBudget).
const answerHardFactor = 4

// sessionAnswerBudget is a client's answer budget: the queue, and room
// for two of the largest messages mcpgate takes (max_message_bytes) to
// wait besides, so that one being written and one more always pass.
func sessionAnswerBudget(maxMessage int) int {
	return sessionQueueBytes + 2*maxMessage
}

// errClientStuck is what a request to a client past its budget fails with.
var errClientStuck = errors.New("the client is not reading: too many bytes of messages wait for it")

// waitForRoom waits within ctx until m, of size bytes, fits in the queue
// (see answerBudget), and returns what is to be queued: m, or the error
// that replaces it. q.mu held; it is released while waiting and while
// onStuck logs.
func (q *outbox) waitForRoom(ctx context.Context, m queued, size int) (queued, int, error) {
	b := &q.budget
	past := b.limit > 0 && q.bytes+b.waiting+size > b.limit
	hard := b.limit > 0 && q.bytes+b.waiting+size > answerHardFactor*b.limit
	b.waiting += size
	defer func() { b.waiting -= size }()
	stop := context.AfterFunc(ctx, q.wakeWaiters)
	defer stop()
	var (
		timer    *time.Timer
		gen      int  // the timer's, so that one stopped too late is ignored
		fired    bool // the timer of gen fired
		progress uint64
	)
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	for q.full(size) && !q.closed && ctx.Err() == nil {
		if hard || past && (b.stuck && b.stuckAt == b.written || fired && progress == b.written) {
			limit := b.limit
			if hard {
				limit *= answerHardFactor
			} else {
				b.stuck, b.stuckAt = true, b.written
			}
			if !m.final || !m.related.IsValid() {
				return m, size, errClientStuck
			}
			held := q.bytes + b.waiting - size
			stand := queued{msg: stuckAnswer(m.related, size, held, limit), related: m.related, final: true}
			released, releasedSize := m.related, size
			b.waiting -= size
			m, size, past, hard = stand, stand.size(), false, false
			b.waiting += size
			if b.released++; b.released == 1 && b.onStuck != nil {
				q.mu.Unlock()
				b.onStuck(released, releasedSize, held)
				q.mu.Lock()
			}
			continue
		}
		if past && (timer == nil || progress != b.written) {
			// A write completed since the timer was set: the client reads.
			if timer != nil {
				timer.Stop()
			}
			gen++
			progress, fired = b.written, false
			mine := gen
			timer = time.AfterFunc(clientStuckAfter, func() {
				q.mu.Lock()
				if mine == gen {
					fired = true
				}
				q.room.Broadcast()
				q.mu.Unlock()
			})
		}
		q.room.Wait()
	}
	return m, size, nil
}

// wakeWaiters wakes the callers waiting for room, to look again.
func (q *outbox) wakeWaiters() {
	q.mu.Lock()
	q.room.Broadcast()
	q.mu.Unlock()
}

// stuckAnswer is the error a request gets in place of an answer released
// for a client past its budget.
func stuckAnswer(id jsonrpc.ID, size, held, limit int) []byte {
	return (&jsonrpc.Message{ID: id, Error: &jsonrpc.Error{
		Code:    errUnavailable.Code,
		Message: fmt.Sprintf("mcpgate: this answer (%d bytes) was dropped: %d bytes of answers were waiting already for this client to read them (the limit is %d); read answers sooner, or have fewer requests in flight", size, held, limit),
	}}).Encode()
}

// boundAnswers sets the session's answer budget (see answerBudget).
func (s *session) boundAnswers() {
	maxMessage := s.g.live().cfg.MaxMessage
	if maxMessage <= 0 {
		maxMessage = jsonrpc.DefaultMaxMessage
	}
	limit := sessionAnswerBudget(maxMessage)
	s.out.mu.Lock()
	defer s.out.mu.Unlock()
	s.out.budget.limit = limit
	s.out.budget.onStuck = func(id jsonrpc.ID, size, held int) {
		s.g.log.Warn("client is not reading: answers to it are dropped, each replaced by an error, until it catches up",
			"session", s.id, "request", id.String(), "answer_bytes", size, "held_bytes", held, "limit_bytes", limit)
	}
}
