package proxy

import "github.com/mcpgate/mcpgate/jsonrpc"

// An HTTP client's tools/call goes inline too (see inline.go): its first
// half runs on the POST's goroutine (the HTTP front serves each POST on its
// own, see jsonrpc.DirectStream), its second half on the server's reader,
// which hands the answer to the POST itself (answerTaker) rather than wake
// the outbox's writer goroutine to do it: each of the two was a handoff on
// every call.

// answerTaker is implemented by a client stream that can take a request's
// answer without waiting (the HTTP front's, whose POST keeps a slot for
// it). TryWriteAnswer reports false when it cannot, and nothing was taken.
type answerTaker interface {
	TryWriteAnswer(msg []byte, related jsonrpc.ID) bool
}

// tryAnswer writes the one message queued, which nobody is writing, on the
// caller's goroutine when it is an answer the stream takes without
// waiting (see answerTaker); false: it stays queued, untouched. Nothing
// queued before it can be overtaken: the queue holds only it. q.mu held.
func (q *outbox) tryAnswer() bool {
	at, ok := q.Stream.(answerTaker)
	m := q.msgs[0]
	if !ok || !m.final || m.msg == nil || m.rest || !m.related.IsValid() {
		return false
	}
	q.writing = true // the message stays at the front meanwhile
	q.mu.Unlock()
	taken := at.TryWriteAnswer(m.msg, m.related)
	q.mu.Lock()
	q.writing = false
	if !taken {
		return false
	}
	q.popWritten(1)
	q.budget.written++
	q.afterCallersWrite()
	return true
}

// inlineStream reports whether a session over the client stream may serve
// calls inline: one that can write without waiting (a stdio client's, see
// jsonrpc.TryWriter), or take an answer without waiting (answerTaker).
func inlineStream(stream jsonrpc.Stream) bool {
	if _, ok := stream.(jsonrpc.TryWriter); ok {
		return true
	}
	_, ok := stream.(answerTaker)
	return ok
}
