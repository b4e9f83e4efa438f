package proxy

import (
	"testing"
	"time"

	"github.com/mcpgate/mcpgate/jsonrpc"
)

// Requests that POSTs write to one server at about the same time share a
// write: the one that finds the queue idle yields first, and what the
// others queue meanwhile goes out with it, in order, in one write. An
// answer, or a message under a cork, is written as before.
func TestOutboxRequestsQueuedDuringAYieldShareAWrite(t *testing.T) {
	s := &corkStream{room: 1 << 20, changed: make(chan struct{}, 1)}
	q := newOutbox(s, upstreamQueueBytes, false, time.Second, nil)
	defer q.Close()
	yields := 0
	q.mu.Lock()
	q.yieldToReady = func() {
		// The other POSTs run here, as the goroutines ready to run do.
		yields++
		for i := 2; i <= 3; i++ {
			if taken, err := q.WriteNoWait(msgN(i), jsonrpc.ID{}, false, nil); !taken || err != nil {
				t.Errorf("WriteNoWait of request %d during the yield = %v, %v", i, taken, err)
			}
		}
	}
	q.mu.Unlock()
	if taken, err := q.WriteNoWait(msgN(1), jsonrpc.ID{}, false, nil); !taken || err != nil {
		t.Fatalf("WriteNoWait = %v, %v", taken, err)
	}
	s.await(t, `trylines:{"id":1}|{"id":2}|{"id":3}|`)
	q.mu.Lock()
	q.yieldToReady = func() { yields++ }
	q.mu.Unlock()
	q.WriteNoWait(msgN(4), jsonrpc.IntID(4), true, nil) // an answer: at once
	s.await(t, `trylines:{"id":1}|{"id":2}|{"id":3}| try:{"id":4}`)
	if yields != 1 {
		t.Errorf("%d yields, want 1: only the first request's writer yields", yields)
	}
}
