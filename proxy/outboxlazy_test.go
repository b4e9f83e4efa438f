package proxy

import (
	"context"
	"testing"
	"time"
)

// An outbox whose messages all go out on their callers' goroutines never
// starts its writer goroutine (a modern request's session made one for
// nothing each time), and its Close ends it all the same: done is closed.
// One that is left a message starts it, and delivers it.
func TestOutboxWriterStartsWhenNeeded(t *testing.T) {
	s := &tryStream{room: 1 << 20, changed: make(chan struct{}, 1)}
	q := newOutbox(s, upstreamQueueBytes, false, time.Minute, nil)
	if err := q.Write(context.Background(), []byte(`{"id":1}`)); err != nil {
		t.Fatal(err)
	}
	q.mu.Lock()
	started := q.started
	q.mu.Unlock()
	if started {
		t.Fatal("the writer goroutine was started for a message its caller wrote")
	}
	q.Close()
	select {
	case <-q.done:
	default:
		t.Fatal("Close returned with done open")
	}

	s = &tryStream{room: 5, changed: make(chan struct{}, 1)} // the rest goes through the writer goroutine
	q = newOutbox(s, upstreamQueueBytes, false, time.Minute, nil)
	defer q.Close()
	if err := q.Write(context.Background(), []byte(`{"id":2}`)); err != nil {
		t.Fatal(err)
	}
	timeout := time.After(10 * time.Second)
	for {
		if wire, _ := s.snapshot(); wire == "{\"id\":2}\n" {
			return
		}
		select {
		case <-s.changed:
		case <-timeout:
			wire, _ := s.snapshot()
			t.Fatalf("on the wire after 10s: %q; want the whole message", wire)
		}
	}
}
