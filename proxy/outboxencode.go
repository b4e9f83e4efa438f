package proxy

import "github.com/mcpgate/mcpgate/jsonrpc"

// A request or answer that a reader hands to an outbox without waiting
// (jsonrpc.NoWaitEncoder) is encoded into the outbox's arena rather than
// into an allocation of its own: two allocations of every inline call (its
// request to the server, its answer to the client). The arena's bytes are
// reused from its start once nothing queued views them (the queue is
// empty and nobody is writing); while the queue never empties, a full
// arena is left to the messages that view it and a new one begun, so that
// it holds at most what is queued and one arena more.

// An arena starts at minArenaBytes and doubles, as it fills while the
// queue never empties, up to arenaBytes: an idle outbox holds little. A
// message bigger than a quarter of the largest is encoded into an
// allocation of its own, as before.
const (
	minArenaBytes = 1 << 10
	arenaBytes    = 16 << 10
)

// EncodeNoWait is WriteNoWait of m's wire form, encoded into q's arena.
func (q *outbox) EncodeNoWait(m jsonrpc.Message, related jsonrpc.ID, final bool, cork *jsonrpc.Cork) (taken bool, err error) {
	hint := m.EncodedSizeHint()
	if hint > arenaBytes/4 || !q.reusesWrites() {
		return q.WriteNoWait(m.Encode(), related, final, cork)
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	if len(q.msgs) == 0 && !q.writing {
		q.arena = q.arena[:0] // nothing queued or being written views it
	}
	if len(q.arena)+hint > cap(q.arena) {
		// The full one is left to what views it.
		q.arena = make([]byte, 0, min(max(2*cap(q.arena), minArenaBytes, hint), arenaBytes))
	}
	start := len(q.arena)
	q.arena = m.AppendEncoded(q.arena)
	// Capped at its end: nothing appended to the message reaches the next.
	msg := q.arena[start:len(q.arena):len(q.arena)]
	if taken, err = q.writeNoWaitLocked(msg, related, final, cork); !taken {
		// Refused before anything was written or q.mu let go: nothing
		// views its bytes.
		q.arena = q.arena[:start]
	}
	if cap(q.arena) > arenaBytes {
		// The message outgrew its hint: its array is left to it, not kept
		// for the next, or an idle outbox would hold the largest ever sent.
		q.arena = nil
	}
	return taken, err
}

// reusesWrites reports whether q's stream keeps nothing of a message once
// written (see jsonrpc.ReuseSafeWriter): only then may the arena's bytes
// be reused.
func (q *outbox) reusesWrites() bool {
	rs, ok := q.Stream.(jsonrpc.ReuseSafeWriter)
	return ok && rs.KeepsNothingWritten()
}

// KeepsNothingWritten: a server's stdin keeps nothing of what was written
// when its stream does not.
func (p *process) KeepsNothingWritten() bool {
	rs, ok := p.Stream.(jsonrpc.ReuseSafeWriter)
	return ok && rs.KeepsNothingWritten()
}
