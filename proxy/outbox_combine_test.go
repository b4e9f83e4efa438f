package proxy

import (
	"errors"
	"os"
	"strings"
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

// An outbox closed while a POST holds it for its yield still delivers the
// request, and what joined it, within its grace: the writer goroutine
// waits for the claim to end, then writes them.
func TestOutboxClosedDuringAYieldStillDelivers(t *testing.T) {
	s := &corkStream{room: 1 << 20, changed: make(chan struct{}, 1)}
	q := newOutbox(s, upstreamQueueBytes, false, time.Minute, nil)
	closed := make(chan struct{})
	q.mu.Lock()
	q.yieldToReady = func() {
		if taken, err := q.WriteNoWait(msgN(2), jsonrpc.ID{}, false, nil); !taken || err != nil {
			t.Errorf("WriteNoWait of request 2 during the yield = %v, %v", taken, err)
		}
		go func() {
			q.Close()
			close(closed)
		}()
		q.mu.Lock()
		for !q.closed {
			q.room.Wait() // Close broadcasts it
		}
		q.mu.Unlock()
	}
	q.mu.Unlock()
	if taken, err := q.WriteNoWait(msgN(1), jsonrpc.ID{}, false, nil); !taken || err != nil {
		t.Fatalf("WriteNoWait = %v, %v", taken, err)
	}
	s.await(t, `lines:{"id":1}|{"id":2}`)
	select {
	case <-closed:
	case <-time.After(30 * time.Second):
		t.Fatal("Close did not return once the queue was delivered")
	}
}

// A server that has gone (its stdin's reader closed: EPIPE) fails the
// outbox once the writer goroutine writes what the POST's non-blocking
// write could not: the request is not written twice, and what comes next
// is refused, not queued for nobody.
func TestOutboxRequestToAGoneServerClosesTheOutbox(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	r.Close()
	q := newOutbox(jsonrpc.NewLineStream(strings.NewReader(""), w, w, 0), upstreamQueueBytes, false, time.Second, nil)
	defer q.Close()
	if taken, err := q.WriteNoWait(msgN(1), jsonrpc.ID{}, false, nil); !taken || err != nil {
		t.Fatalf("WriteNoWait = %v, %v; want taken, for the writer goroutine to find the error", taken, err)
	}
	select {
	case <-q.done:
	case <-time.After(30 * time.Second):
		t.Fatal("the writer goroutine did not end on the broken pipe")
	}
	if taken, err := q.WriteNoWait(msgN(2), jsonrpc.ID{}, false, nil); taken || !errors.Is(err, jsonrpc.ErrClosed) {
		t.Errorf("WriteNoWait after the pipe broke = %v, %v; want refused, %v", taken, err, jsonrpc.ErrClosed)
	}
}
