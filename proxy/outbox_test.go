package proxy

import (
	"context"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate/jsonrpc"
)

// blockedStream never finishes a write until released, like a client that
// stopped reading with its pipe full.
type blockedStream struct {
	release chan struct{}
	mu      sync.Mutex
	written [][]byte
}

func (b *blockedStream) Read() ([]byte, error) { select {} }
func (b *blockedStream) Write(ctx context.Context, m []byte) error {
	<-b.release
	b.mu.Lock()
	b.written = append(b.written, m)
	b.mu.Unlock()
	return nil
}
func (b *blockedStream) Close() error { return nil }

// A client that stops reading: notifications beyond the queue's bound are
// dropped at once (the caller, often an upstream's reader, never waits),
// the drop is reported once, and what was queued is delivered in order when
// the client reads again.
func TestOutboxBoundedWhenClientStopsReading(t *testing.T) {
	bs := &blockedStream{release: make(chan struct{})}
	reports := 0
	q := newOutbox(bs, 100, true, 2*time.Second, func(int) { reports++ })
	msg := []byte(`{"jsonrpc":"2.0","method":"notifications/progress"}`) // 51 bytes

	done := make(chan struct{})
	go func() {
		for range 1000 {
			q.offer(msg, jsonrpc.ID{})
		}
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("offer blocked on a client that does not read")
	}
	q.mu.Lock()
	queued, bytes, dropped := len(q.msgs), q.bytes, q.dropped
	q.mu.Unlock()
	// One message is out in the blocked write; at most limit bytes wait.
	if bytes > 100+len(msg) || queued > 2 || dropped < 990 {
		t.Fatalf("queued %d messages (%d bytes), dropped %d", queued, bytes, dropped)
	}
	if reports != 1 {
		t.Fatalf("drop reported %d times, want once per episode", reports)
	}

	// A response waits for room instead of being dropped.
	answered := make(chan error, 1)
	go func() { answered <- q.Write(context.Background(), []byte(`{"jsonrpc":"2.0","id":1,"result":{}}`)) }()
	close(bs.release)
	select {
	case err := <-answered:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("response never queued after the client read again")
	}
	q.Close()
	bs.mu.Lock()
	defer bs.mu.Unlock()
	if last := string(bs.written[len(bs.written)-1]); last != `{"jsonrpc":"2.0","id":1,"result":{}}` {
		t.Fatalf("last written = %s, want the response, after the notifications queued before it", last)
	}
}

// A state-change notice (roots/list_changed) offered while one is still
// queued says nothing new: a flood of them toward a peer that does not read
// costs one queued message, and one more once the first is written.
func TestOutboxCoalescesNotices(t *testing.T) {
	bs := &blockedStream{release: make(chan struct{})}
	q := newOutbox(bs, 8<<20, false, time.Second, nil)
	notice := []byte(`{"jsonrpc":"2.0","method":"notifications/roots/list_changed"}`)
	other := []byte(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}`)
	q.offerOnce(notice) // taken by the writer, which blocks on it
	waitFor := func(cond func() bool) {
		deadline := time.Now().Add(10 * time.Second)
		for !cond() {
			if time.Now().After(deadline) {
				t.Fatal("timed out")
			}
			time.Sleep(time.Millisecond)
		}
	}
	waitFor(func() bool { q.mu.Lock(); defer q.mu.Unlock(); return q.writing && len(q.msgs) == 0 })
	for range 100000 {
		q.offerOnce(notice)
	}
	q.offer(other, jsonrpc.ID{})
	q.offerOnce(notice) // behind another message: still the same notice queued
	q.mu.Lock()
	queued := len(q.msgs)
	q.mu.Unlock()
	if queued != 2 {
		t.Fatalf("%d messages queued after 100,001 notices and one other, want 2", queued)
	}
	close(bs.release)
	q.Close()
	bs.mu.Lock()
	defer bs.mu.Unlock()
	if len(bs.written) != 3 {
		t.Fatalf("%d messages written, want 3 (the notice being written, one notice, the other)", len(bs.written))
	}
}

// The drop report logs, and a log line may wait on a stderr nobody reads:
// it is made with the queue's lock released, so that the writer and every
// other caller keep going meanwhile.
func TestOutboxReportsDropsWithoutItsLock(t *testing.T) {
	bs := &blockedStream{release: make(chan struct{})}
	var q *outbox
	heldDuringReport := 0
	q = newOutbox(bs, 100, false, time.Second, func(int) {
		// The writer goroutine may hold the lock for a moment; the caller
		// of offer would hold it for good.
		for deadline := time.Now().Add(10 * time.Second); !q.mu.TryLock(); runtime.Gosched() {
			if time.Now().After(deadline) {
				heldDuringReport++
				return
			}
		}
		q.mu.Unlock()
	})
	defer q.Close()
	defer close(bs.release)
	msg := []byte(`{"jsonrpc":"2.0","method":"notifications/progress"}`)
	for range 10 {
		q.offer(msg, jsonrpc.ID{})
	}
	q.offerOnce([]byte(`{"jsonrpc":"2.0","method":"notifications/roots/list_changed"}`))
	if heldDuringReport > 0 {
		t.Fatalf("onDrop was called %d times with the queue's lock held", heldDuringReport)
	}
}
