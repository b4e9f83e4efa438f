package proxy

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mcpgate/mcpgate/jsonrpc"
)

// corkStream is a peer's stream that records each write: by whom, and
// the lines it held. TryWriteLines takes up to room bytes.
type corkStream struct {
	mu      sync.Mutex
	room    int
	writes  []string // "how:line|line"
	changed chan struct{}
}

func (s *corkStream) record(how string, lines ...[]byte) {
	var ls []string
	for _, l := range lines {
		ls = append(ls, strings.TrimSuffix(string(l), "\n"))
	}
	s.mu.Lock()
	s.writes = append(s.writes, how+":"+strings.Join(ls, "|"))
	s.mu.Unlock()
	select {
	case s.changed <- struct{}{}:
	default:
	}
}

func (s *corkStream) Read() ([]byte, error) { select {} }
func (s *corkStream) Close() error          { return nil }
func (s *corkStream) Write(ctx context.Context, m []byte) error {
	s.record("write", m)
	return nil
}
func (s *corkStream) WriteLines(ctx context.Context, msgs [][]byte) error {
	s.record("lines", msgs...)
	return nil
}
func (s *corkStream) TryWrite(m []byte) (bool, []byte, error) {
	s.record("try", m)
	return true, nil, nil
}
func (s *corkStream) WriteRest(ctx context.Context, rest []byte) error {
	s.record("rest", rest)
	return nil
}
func (s *corkStream) TryWriteLines(msgs [][]byte) (int, []byte, error) {
	s.mu.Lock()
	room := s.room
	s.mu.Unlock()
	var wire []byte
	for _, m := range msgs {
		wire = append(append(wire, m...), '\n')
	}
	n := min(room, len(wire))
	if n == 0 {
		return 0, nil, nil
	}
	whole, end := 0, 0
	for _, m := range msgs {
		if end+len(m)+1 > n {
			break
		}
		whole, end = whole+1, end+len(m)+1
	}
	s.record("trylines", []byte(strings.ReplaceAll(string(wire[:n]), "\n", "|")))
	if whole < len(msgs) && n > end {
		return whole, wire[n : end+len(msgs[whole])+1], nil
	}
	return whole, nil, nil
}

func (s *corkStream) await(t *testing.T, want string) {
	t.Helper()
	timeout := time.After(10 * time.Second)
	for {
		s.mu.Lock()
		got := strings.Join(s.writes, " ")
		s.mu.Unlock()
		if got == want {
			return
		}
		select {
		case <-s.changed:
		case <-timeout:
			t.Fatalf("writes: %s; want %s", got, want)
		}
	}
}

func msgN(i int) []byte { return []byte(fmt.Sprintf(`{"id":%d}`, i)) }

// What a reader writes with its cork waits until the cork is flushed, and
// then goes out in one write, in order; a message from elsewhere meanwhile
// joins them.
func TestOutboxCorkWritesHeldMessagesTogether(t *testing.T) {
	for _, inline := range []bool{true, false} {
		synctest.Test(t, func(t *testing.T) { corkHeldTogether(t, inline) })
	}
}

func corkHeldTogether(t *testing.T, inline bool) {
	s := &corkStream{room: 1 << 20, changed: make(chan struct{}, 1)}
	q := newOutbox(s, upstreamQueueBytes, inline, time.Second, nil)
	defer q.Close()
	synctest.Wait() // the writer goroutine waits
	var cork jsonrpc.Cork
	for i := 1; i <= 2; i++ {
		if taken, err := q.WriteNoWait(msgN(i), jsonrpc.IntID(int64(i)), true, &cork); !taken || err != nil {
			t.Fatalf("WriteNoWait = %v, %v", taken, err)
		}
	}
	if taken, _ := q.WriteNoWait(msgN(3), jsonrpc.IntID(3), true, nil); !taken {
		t.Fatal("WriteNoWait without a cork did not take its message")
	}
	synctest.Wait()
	s.mu.Lock()
	early := fmt.Sprint(s.writes)
	s.mu.Unlock()
	if early != "[]" {
		t.Fatalf("inline=%v: written before the cork was flushed: %v", inline, early)
	}
	cork.Flush()
	s.await(t, `trylines:{"id":1}|{"id":2}|{"id":3}|`)
}

// A flush the peer has room for only in part leaves the rest of the
// message it cut to the writer goroutine, before the messages after it.
func TestOutboxCorkFlushFinishesPartialWriteFirst(t *testing.T) {
	synctest.Test(t, corkPartial)
}

func corkPartial(t *testing.T) {
	s := &corkStream{room: 12, changed: make(chan struct{}, 1)}
	q := newOutbox(s, upstreamQueueBytes, false, time.Second, nil)
	defer q.Close()
	synctest.Wait()
	var cork jsonrpc.Cork
	for i := 1; i <= 3; i++ {
		q.WriteNoWait(msgN(i), jsonrpc.IntID(int64(i)), false, &cork)
	}
	cork.Flush()
	s.await(t, `trylines:{"id":1}|{"i rest:d":2} write:{"id":3}`)
}

// A caller that must wait for room does not wait for the cork: the writer
// goroutine writes what it holds.
func TestOutboxCorkDoesNotHoldUpCallersWaitingForRoom(t *testing.T) {
	synctest.Test(t, corkFull)
}

func corkFull(t *testing.T) {
	s := &corkStream{room: 1 << 20, changed: make(chan struct{}, 1)}
	q := newOutbox(s, 20, false, time.Second, nil)
	defer q.Close()
	synctest.Wait()
	var cork jsonrpc.Cork
	for i := 1; i <= 2; i++ {
		q.WriteNoWait(msgN(i), jsonrpc.IntID(int64(i)), false, &cork)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := q.Write(ctx, msgN(3)); err != nil {
		t.Fatalf("Write behind a full queue held by a cork: %v", err)
	}
	s.await(t, `lines:{"id":1}|{"id":2} try:{"id":3}`)
	cork.Flush() // nothing left
	s.await(t, `lines:{"id":1}|{"id":2} try:{"id":3}`)
}

// A state-change notice (roots/list_changed) that a flush could write only
// in part has begun going out: the next such notice is queued, not
// coalesced into it. The rest is left under another spelling, and the
// notice's count was never given back: every later notice was dropped.
func TestOutboxCorkPartialNoticeDoesNotSilenceTheNext(t *testing.T) {
	s := &corkStream{room: 10, changed: make(chan struct{}, 1)}
	// No writer goroutine: the flush is the first to find the notice, as
	// when it runs before the woken writer does.
	q := &outbox{Stream: s, limit: upstreamQueueBytes, done: make(chan struct{}), started: true} // started: none is to start
	q.wake.L, q.room.L = &q.mu, &q.mu
	notice := []byte(`{"jsonrpc":"2.0","method":"notifications/roots/list_changed"}`)
	q.offerOnce(notice)
	q.FlushCork()
	q.mu.Lock()
	q.drain() // the writer goroutine's turn: the rest
	q.mu.Unlock()
	s.await(t, `trylines:{"jsonrpc" rest::"2.0","method":"notifications/roots/list_changed"}`)
	q.offerOnce(notice)
	q.mu.Lock()
	defer q.mu.Unlock()
	if len(q.msgs) != 1 {
		t.Fatalf("%d messages queued for a notice offered once the last was written, want 1", len(q.msgs))
	}
}

// An outbox closed while a cork holds its messages still delivers them
// (the answers to the last requests): its writer goroutine writes them
// within the grace, and the cork's later flush writes nothing twice.
func TestOutboxCorkClosedStillDelivers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := &corkStream{room: 1 << 20, changed: make(chan struct{}, 1)}
		q := newOutbox(s, sessionQueueBytes, true, time.Second, nil)
		synctest.Wait()
		var cork jsonrpc.Cork
		for i := 1; i <= 2; i++ {
			if taken, err := q.WriteNoWait(msgN(i), jsonrpc.IntID(int64(i)), true, &cork); !taken || err != nil {
				t.Fatalf("WriteNoWait = %v, %v", taken, err)
			}
		}
		q.Close()
		cork.Flush()
		s.await(t, `lines:{"id":1}|{"id":2}`)
		if taken, err := q.WriteNoWait(msgN(3), jsonrpc.IntID(3), true, &cork); taken || err == nil {
			t.Fatalf("WriteNoWait on a closed outbox = %v, %v; want not taken, an error", taken, err)
		}
	})
}
