package proxy

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// tryStream is a server's stdin that takes a write at once while it has
// room (TryWrite), a part of one when room runs out, and the rest only
// through the writer goroutine (WriteRest, Write).
type tryStream struct {
	mu      sync.Mutex
	room    int      // bytes TryWrite may still take
	wire    []string // what reached the server, in order
	tries   int
	waiting []string      // how each message went: "try", "rest", "write"
	changed chan struct{} // 1-buffered: told of each write
}

func (s *tryStream) wrote() {
	select {
	case s.changed <- struct{}{}:
	default:
	}
}

func (s *tryStream) Read() ([]byte, error) { select {} }
func (s *tryStream) Close() error          { return nil }
func (s *tryStream) Write(ctx context.Context, m []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.wire = append(s.wire, string(m)+"\n")
	s.waiting = append(s.waiting, "write")
	s.wrote()
	return nil
}
func (s *tryStream) TryWrite(m []byte) (bool, []byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.tries++
	line := string(m) + "\n"
	n := min(s.room, len(line))
	if n == 0 {
		return false, nil, nil
	}
	s.room -= n
	s.wire = append(s.wire, line[:n])
	s.waiting = append(s.waiting, "try")
	s.wrote()
	return true, []byte(line[n:]), nil
}
func (s *tryStream) WriteRest(ctx context.Context, rest []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.wire = append(s.wire, string(rest))
	s.waiting = append(s.waiting, "rest")
	s.wrote()
	return nil
}

func (s *tryStream) snapshot() (wire string, ways []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return strings.Join(s.wire, ""), append([]string(nil), s.waiting...)
}

// Toward a server with room in its stdin, a request is written on the
// caller's goroutine: it has reached the server when Write returns, with
// no handoff to the writer goroutine.
func TestOutboxWritesInlineWhenServerHasRoom(t *testing.T) {
	s := &tryStream{room: 1 << 20, changed: make(chan struct{}, 1)}
	q := newOutbox(s, upstreamQueueBytes, false, time.Second, nil)
	defer q.Close()
	for _, m := range []string{`{"id":1}`, `{"id":2}`} {
		if err := q.Write(context.Background(), []byte(m)); err != nil {
			t.Fatal(err)
		}
	}
	wire, ways := s.snapshot()
	if wire != "{\"id\":1}\n{\"id\":2}\n" || strings.Join(ways, ",") != "try,try" {
		t.Fatalf("on the wire when Write returned: %q, written by %v; want both, by TryWrite", wire, ways)
	}
}

// When the server's stdin fills in the middle of a message, the rest of it
// goes out through the writer goroutine before anything else: no message
// is cut or interleaved.
func TestOutboxFinishesPartialWriteFirst(t *testing.T) {
	s := &tryStream{room: 5, changed: make(chan struct{}, 1)}
	q := newOutbox(s, upstreamQueueBytes, false, time.Second, nil)
	defer q.Close()
	msgs := []string{`{"id":1,"method":"a"}`, `{"id":2,"method":"b"}`, `{"id":3,"method":"c"}`}
	for _, m := range msgs {
		if err := q.Write(context.Background(), []byte(m)); err != nil {
			t.Fatal(err)
		}
	}
	want := strings.Join(msgs, "\n") + "\n"
	timeout := time.After(10 * time.Second)
	for {
		wire, ways := s.snapshot()
		if wire == want {
			if ways[0] != "try" || ways[1] != "rest" {
				t.Errorf("written by %v; want the first by TryWrite, its rest by WriteRest", ways)
			}
			return
		}
		if !strings.HasPrefix(want, wire) {
			t.Fatalf("on the wire: %q; want %q", wire, want)
		}
		select {
		case <-s.changed:
		case <-timeout:
			t.Fatalf("on the wire after 10s: %q; want %q", wire, want)
		}
	}
}

// linesStream holds its first write until released, and records how
// messages were written: one by one, or together.
type linesStream struct {
	began   chan struct{} // 1-buffered: told when a write begins
	release chan struct{}
	mu      sync.Mutex
	writes  [][]string
	changed chan struct{}
}

func (s *linesStream) Read() ([]byte, error) { select {} }
func (s *linesStream) Close() error          { return nil }
func (s *linesStream) Write(ctx context.Context, m []byte) error {
	s.began <- struct{}{}
	<-s.release
	return s.record(string(m))
}
func (s *linesStream) WriteLines(ctx context.Context, msgs [][]byte) error {
	var w []string
	for _, m := range msgs {
		w = append(w, string(m))
	}
	return s.record(w...)
}
func (s *linesStream) record(msgs ...string) error {
	s.mu.Lock()
	s.writes = append(s.writes, msgs)
	s.mu.Unlock()
	select {
	case s.changed <- struct{}{}:
	default:
	}
	return nil
}

// Answers that queue up behind a write in progress go out together, in one
// write, in order.
func TestOutboxWritesQueuedMessagesTogether(t *testing.T) {
	s := &linesStream{began: make(chan struct{}, 1), release: make(chan struct{}), changed: make(chan struct{}, 1)}
	q := newOutbox(s, upstreamQueueBytes, true, time.Second, nil)
	defer q.Close()
	first := make(chan error, 1)
	go func() { first <- q.Write(context.Background(), []byte(`{"id":1}`)) }()
	timeout := time.After(10 * time.Second)
	select { // the first write has begun: it holds the right to write
	case <-s.began:
	case <-timeout:
		t.Fatal("the first write never began")
	}
	for _, m := range []string{`{"id":2}`, `{"id":3}`, `{"id":4}`} {
		if err := q.Write(context.Background(), []byte(m)); err != nil {
			t.Fatal(err)
		}
	}
	close(s.release)
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	for {
		s.mu.Lock()
		got := fmt.Sprint(s.writes)
		s.mu.Unlock()
		if got == `[[{"id":1}] [{"id":2} {"id":3} {"id":4}]]` {
			return
		}
		select {
		case <-s.changed:
		case <-timeout:
			t.Fatalf("writes: %s; want the first, then the three queued behind it together", got)
		}
	}
}

// The writer goroutine sleeps while callers write their messages
// themselves: toward a client (inline) and toward a server with room
// (TryWrite), a message costs no wake-up of it (each cost a handoff on
// every request and every answer). What a caller leaves, it writes.
func TestOutboxWriterSleepsWhileCallersWrite(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		for _, c := range []struct {
			name   string
			inline bool
			s      *tryStream
		}{
			{"inline", true, &tryStream{changed: make(chan struct{}, 1)}},
			{"tried", false, &tryStream{room: 1 << 20, changed: make(chan struct{}, 1)}},
		} {
			q := newOutbox(c.s, upstreamQueueBytes, c.inline, time.Second, nil)
			synctest.Wait()
			for i := range 20 {
				if err := q.Write(context.Background(), []byte(fmt.Sprintf(`{"id":%d}`, i))); err != nil {
					t.Fatal(err)
				}
				synctest.Wait() // the writer goroutine, if woken, has run
			}
			q.mu.Lock()
			wakes := q.wakes
			q.mu.Unlock()
			if wakes > 0 {
				t.Errorf("%s: the writer goroutine woke %d times for 20 messages its callers wrote", c.name, wakes)
			}
			if wire, _ := c.s.snapshot(); strings.Count(wire, "\n") != 20 {
				t.Errorf("%s: %d messages written, want 20", c.name, strings.Count(wire, "\n"))
			}
			q.Close()
		}
		// A message that the caller cannot write at once is the writer
		// goroutine's: it is woken for it.
		s := &tryStream{changed: make(chan struct{}, 1)}
		q := newOutbox(s, upstreamQueueBytes, false, time.Second, nil)
		defer q.Close()
		if err := q.Write(context.Background(), []byte(`{"id":"full"}`)); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		if wire, ways := s.snapshot(); wire != "{\"id\":\"full\"}\n" || strings.Join(ways, ",") != "write" {
			t.Fatalf("a message TryWrite could not take: %q, written by %v; want it written by the writer goroutine", wire, ways)
		}
	})
}
