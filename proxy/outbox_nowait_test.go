package proxy

import (
	"strings"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate/jsonrpc"
)

// WriteNoWait (a reader finishing a call) writes at once when the stream
// has room, takes a message while the queue has room, and never waits: a
// full queue says so, and a closed one fails.
func TestOutboxWriteNoWait(t *testing.T) {
	s := &tryStream{room: 1 << 20, changed: make(chan struct{}, 1)}
	q := newOutbox(s, 100, true, time.Second, nil)
	if taken, err := q.WriteNoWait([]byte(`{"id":1}`), jsonrpc.IntID(1), true, nil); !taken || err != nil {
		t.Fatalf("WriteNoWait with room = %v, %v", taken, err)
	}
	if wire, ways := s.snapshot(); wire != "{\"id\":1}\n" || strings.Join(ways, ",") != "try" {
		t.Fatalf("on the wire when WriteNoWait returned: %q, written by %v; want it, by TryWrite", wire, ways)
	}

	bs := &blockedStream{release: make(chan struct{})}
	q = newOutbox(bs, 100, true, time.Second, nil)
	defer q.Close()
	defer close(bs.release) // before Close: the blocked write ends
	msg := []byte(`{"jsonrpc":"2.0","id":1,"result":{"text":"about sixty bytes of answer"}}`)
	full := false
	for i := range 10 {
		done := make(chan struct{})
		var taken bool
		var err error
		go func() {
			taken, err = q.WriteNoWait(msg, jsonrpc.IntID(int64(i)), true, nil)
			close(done)
		}()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Fatal("WriteNoWait waited for a client that does not read")
		}
		if err != nil {
			t.Fatal(err)
		}
		if !taken {
			full = true
			break
		}
	}
	if !full {
		t.Fatal("WriteNoWait took 10 messages of 70 bytes into a queue of 100")
	}
	q.mu.Lock()
	q.closed = true
	q.mu.Unlock()
	if _, err := q.WriteNoWait(msg, jsonrpc.IntID(99), true, nil); err != jsonrpc.ErrClosed {
		t.Fatalf("WriteNoWait on a closed outbox: %v, want ErrClosed", err)
	}
}
