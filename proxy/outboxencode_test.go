package proxy

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate/jsonrpc"
)

// Messages encoded into the outbox's arena reach the wire as Encode would
// have written them, whole and in each sender's order, while the arena is
// reused and renewed under them: several senders at once, a stream that
// runs out of room (a message cut, its rest written later; the others to
// the writer goroutine), and messages of every size around the arena's.
func TestOutboxEncodeNoWaitMatchesEncode(t *testing.T) {
	s := &tryStream{room: 50_000, changed: make(chan struct{}, 1)}
	q := newOutbox(s, 1<<20, true, time.Second, nil)
	defer q.Close()
	const senders, each = 4, 300
	want := make([][]string, senders)
	var wg sync.WaitGroup
	for g := range senders {
		wg.Go(func() {
			for i := range each {
				n := (g*7919 + i*104729) % (arenaBytes * 3 / 2)
				m := jsonrpc.Message{ID: jsonrpc.IntID(int64(g*each + i)), Method: "tools/call",
					Params: []byte(`{"name":"s` + fmt.Sprint(g) + `","pad":"` + strings.Repeat("x", n) + `"}`)}
				want[g] = append(want[g], string(m.Encode()))
				for {
					taken, err := q.EncodeNoWait(m, jsonrpc.ID{}, false, nil)
					if err != nil {
						t.Error(err)
						return
					}
					if taken {
						break
					}
					<-s.changed // the queue is full: wait for a write
				}
			}
		})
	}
	wg.Wait()
	deadline := time.After(time.Minute)
	for {
		wire, _ := s.snapshot()
		if strings.Count(wire, "\n") == senders*each {
			break
		}
		select {
		case <-s.changed:
		case <-deadline:
			t.Fatalf("%d of %d messages written after a minute", strings.Count(wire, "\n"), senders*each)
		}
	}
	wire, _ := s.snapshot()
	got := make([][]string, senders)
	for line := range strings.Lines(wire) {
		line = strings.TrimSuffix(line, "\n")
		var g int
		if _, err := fmt.Sscanf(line[strings.Index(line, `"name":"s`)+len(`"name":"s`):], "%d", &g); err != nil || g >= senders {
			t.Fatalf("a line from no sender: %.80q", line)
		}
		got[g] = append(got[g], line)
	}
	for g := range senders {
		if len(got[g]) != each {
			t.Fatalf("sender %d: %d lines on the wire, want %d", g, len(got[g]), each)
		}
		for i := range each {
			if got[g][i] != want[g][i] {
				t.Fatalf("sender %d, message %d on the wire:\n%.200q\nwant (Encode):\n%.200q", g, i, got[g][i], want[g][i])
			}
		}
	}
}

func (s *tryStream) KeepsNothingWritten() bool { return true }

// slowStream is a server whose stdin takes nothing without waiting: every
// message goes to the writer goroutine, whose first Write reads its
// message only once released.
type slowStream struct {
	entered, release chan struct{}
	wrote            chan string // each message written
}

func (s *slowStream) Read() ([]byte, error)                   { select {} }
func (s *slowStream) Close() error                            { return nil }
func (s *slowStream) TryWrite(m []byte) (bool, []byte, error) { return false, nil, nil }
func (s *slowStream) WriteRest(ctx context.Context, rest []byte) error {
	return s.Write(ctx, rest)
}
func (s *slowStream) KeepsNothingWritten() bool { return true }
func (s *slowStream) Write(ctx context.Context, m []byte) error {
	if s.entered != nil {
		close(s.entered)
		s.entered = nil
		<-s.release
	}
	s.wrote <- string(m)
	return nil
}

// A message the writer goroutine has taken off the queue and is writing
// still views the arena: the next message is encoded after it, not over
// it, though the queue is empty.
func TestOutboxArenaKeptWhileWriting(t *testing.T) {
	s := &slowStream{entered: make(chan struct{}), release: make(chan struct{}), wrote: make(chan string, 2)}
	entered := s.entered
	q := newOutbox(s, 1<<20, false, time.Second, nil)
	defer q.Close()
	first := jsonrpc.Message{ID: jsonrpc.IntID(1), Method: "tools/call", Params: []byte(`{"name":"first"}`)}
	second := jsonrpc.Message{ID: jsonrpc.IntID(2), Method: "tools/call", Params: []byte(`{"name":"other"}`)}
	if taken, err := q.EncodeNoWait(first, jsonrpc.ID{}, false, nil); !taken || err != nil {
		t.Fatalf("EncodeNoWait = %v, %v", taken, err)
	}
	<-entered // the writer goroutine took it: the queue is empty
	if taken, err := q.EncodeNoWait(second, jsonrpc.ID{}, false, nil); !taken || err != nil {
		t.Fatalf("EncodeNoWait = %v, %v", taken, err)
	}
	close(s.release)
	for _, want := range []*jsonrpc.Message{&first, &second} {
		select {
		case got := <-s.wrote:
			if got != string(want.Encode()) {
				t.Fatalf("on the wire: %q, want %q", got, want.Encode())
			}
		case <-time.After(10 * time.Second):
			t.Fatal("not written after 10 s")
		}
	}
}

// An answer whose wire form its size hint does not foretell (an error's
// data and text, a long id: a server's or a client's to choose) outgrows
// the arena; the outbox keeps no arena larger than arenaBytes once it is
// sent, else an idle outbox held the largest such answer ever sent.
func TestOutboxArenaNotKeptPastItsBound(t *testing.T) {
	s := &slowStream{wrote: make(chan string, 1)}
	q := newOutbox(s, 64<<20, false, time.Second, nil)
	defer q.Close()
	big := strings.Repeat("x", 1<<20)
	answers := []jsonrpc.Message{
		{ID: jsonrpc.IntID(1), Error: &jsonrpc.Error{Code: -32000, Message: "failed", Data: []byte(`"` + big + `"`)}},
		{ID: jsonrpc.IntID(2), Error: &jsonrpc.Error{Code: -32000, Message: big}},
		{ID: jsonrpc.StringID(big), Result: []byte(`{}`)},
		// Within the hint's reach of the arena, six times that once escaped.
		{ID: jsonrpc.IntID(3), Error: &jsonrpc.Error{Code: -32000, Message: strings.Repeat("\x01", arenaBytes/4-100)}},
	}
	for _, m := range answers {
		if taken, err := q.EncodeNoWait(m, m.ID, true, nil); !taken || err != nil {
			t.Fatalf("EncodeNoWait = %v, %v", taken, err)
		}
		select {
		case got := <-s.wrote:
			if got != string(m.Encode()) {
				t.Fatalf("on the wire: %.80q, want %.80q", got, m.Encode())
			}
		case <-time.After(10 * time.Second):
			t.Fatal("not written after 10 s")
		}
		q.mu.Lock()
		kept := cap(q.arena)
		q.mu.Unlock()
		if kept > arenaBytes {
			t.Fatalf("after an answer of %d bytes the outbox keeps an arena of %d bytes, want at most %d", len(m.Encode()), kept, arenaBytes)
		}
	}
}
