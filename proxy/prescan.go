package proxy

import (
	"encoding/json"
	"slices"
	"sync/atomic"

	"github.com/mcpgate/mcpgate/internal/rawjson"
	"github.com/mcpgate/mcpgate/jsonrpc"
	"github.com/mcpgate/mcpgate/policy"
)

// A big result from a stdio server is read in pieces while the server
// writes it; the text scans of the server's policies decode and scan its
// strings as the pieces come (policy.Prescan), so that once the line is in,
// the answer waits only for what is left. The reader hands the finished
// prescan to the call's Run through the server's slot: one at a time, the
// last line's, taken by the Run on that line's result (runChain) and
// replaced by the next long line's; one whose message is never decided on
// (a policy reload) is let go then, and the late answer to a call given up
// as soon as it is read (lateAnswer).

// prescanSlot holds a server's last finished prescan.
type prescanSlot struct {
	last atomic.Pointer[policy.Prescan]
}

// take returns the prescan of the line msg is in, if the slot holds it,
// and empties the slot.
func (s *prescanSlot) take(msg json.RawMessage) *policy.Prescan {
	ps := s.last.Load()
	if ps == nil || !ps.Covers(msg) || !s.last.CompareAndSwap(ps, nil) {
		return nil
	}
	return ps
}

// lateAnswer lets go of the prescan of the line just read, an answer to a
// call given up: nobody decides on it, and kept until the server's next big
// result it would hold the line and its decoding (twice the result) while
// that one is read. Told on the reader goroutine, right after the line was
// read: the slot holds its prescan, if it had one (else an older line's,
// whose Run then decides without it). Emptied before the call is forgotten
// (givenUpCalls.forget), which a test waits for.
func (s *prescanSlot) lateAnswer() { s.last.Store(nil) }

// watchResults has the long lines of a stdio server's stream prescanned
// for the Result stage of its policies, when they have text scans there.
func (u *upstream) watchResults(stream jsonrpc.Stream) {
	ws, ok := stream.(jsonrpc.LineWatchStream)
	if !ok {
		return
	}
	ws.WatchLongLines(func(first []byte) jsonrpc.LineWatcher {
		sp := u.base.policies.Load() // as they are now: a reload meanwhile makes the prescan unused
		if sp == nil {
			return nil
		}
		ps := sp.chain.Prescan(policy.Result)
		if ps == nil || !mayBeResult(first) {
			return nil
		}
		return &prescanWatch{ps: ps, slot: &u.prescan}
	})
}

// prescanWatch feeds a long line to its prescan, and puts the finished
// prescan in the slot.
type prescanWatch struct {
	ps   *policy.Prescan
	slot *prescanSlot
}

func (w *prescanWatch) Piece(line []byte) { w.ps.Advance(line) }

func (w *prescanWatch) Done(line []byte) {
	if line == nil || !w.ps.Finish(line) {
		w.ps.Stop()
		return
	}
	w.slot.last.Store(w.ps)
}

// mayBeResult reports whether a line that starts with first may be a
// result the Result stage decides on: not a message with a method (a
// server's request or notification) or an error, nor a result that lists
// (its items are decided on one by one, at the List stage). It reads the
// members of the message and of its result as far as first goes,
// skipping strings; it only spares the work of a prescan nobody would use
// (kept in the slot until the next): a result taken for a list is decided
// on as if it had none.
func mayBeResult(first []byte) bool {
	depth := 0
	var top string // the message's member being read
	for i := 0; i < len(first); i++ {
		switch first[i] {
		case '{', '[':
			depth++
		case '}', ']':
			depth--
		case '"':
			end := rawjson.StringEnd(first, i+1)
			if end < 0 {
				return true
			}
			name := string(first[i+1 : end])
			i = end
			j := skipSpace(first, end+1)
			if depth > 2 || j == len(first) || first[j] != ':' {
				continue // a value, or deeper than the result's members
			}
			v := skipSpace(first, j+1)
			switch {
			case depth == 1:
				top = name
				if name == "method" || name == "error" {
					return false
				}
			case top == "result" && v < len(first) && first[v] == '[' && slices.Contains(listMembers, name):
				return false
			}
		}
	}
	return true
}

var listMembers = []string{"tools", "prompts", "resources", "resourceTemplates"}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}
