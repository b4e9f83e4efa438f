package proxy

import (
	"errors"
	"fmt"

	"github.com/mcpgate/mcpgate/jsonrpc"
)

// answerBudget bounds the bytes of messages that wait for one client:
// those queued in its outbox and those waiting for room there. The queue
// alone is bounded (sessionQueueBytes), but a response that finds it full
// waits for room holding its bytes, and a client that stops reading would
// otherwise make each of its requests in flight hold its answer: up to
// 1,024 of them, whatever their size.
//
// Past the budget, the client is treated as stuck: an answer that would
// wait is released and a small error takes its place (it waits as any
// answer does), so that the request is still answered and the client
// learns why once it reads again; a request to the client (sampling,
// elicitation, roots) fails at once. Closing the connection instead would
// end a stdio client's only session, and all its other requests, for
// being slow once. The first answer released in an episode is logged; the
// episode ends when the queue empties.
type answerBudget struct {
	limit    int                                       // 0: no bound (toward an upstream: its callers' deadlines bound it)
	waiting  int                                       // bytes of messages waiting for room in the queue
	released int                                       // answers released since the queue last emptied
	onStuck  func(released jsonrpc.ID, size, held int) // told of an episode's first, without q.mu held (it logs)
}

// sessionAnswerBudget is a client's answer budget: the queue, and room
// for two of the largest messages mcpgate takes (max_message_bytes) to
// wait besides, so that one being written and one more always pass.
func sessionAnswerBudget(maxMessage int) int {
	return sessionQueueBytes + 2*maxMessage
}

// errClientStuck is what a request to a client past its budget fails with.
var errClientStuck = errors.New("the client is not reading: too many bytes of messages wait for it")

// overBudget is asked before m, of size bytes, waits for room: past the
// budget, a final response is replaced by a small error for the same
// request (returned with its size), and anything else is refused. q.mu
// held; it is released while onStuck logs, so the caller checks the
// queue's state again.
func (q *outbox) overBudget(m queued, size int) (queued, int, error) {
	b := &q.budget
	held := q.bytes + b.waiting
	if b.limit == 0 || held+size <= b.limit {
		return m, size, nil
	}
	if !m.final || !m.related.IsValid() {
		return m, size, errClientStuck
	}
	b.released++
	stand := queued{msg: stuckAnswer(m.related, size, held, b.limit), related: m.related, final: true}
	if b.released == 1 && b.onStuck != nil {
		q.mu.Unlock()
		b.onStuck(m.related, size, held)
		q.mu.Lock()
	}
	return stand, stand.size(), nil
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
