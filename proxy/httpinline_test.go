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

// answerStream is a client stream that routes answers by request (as the
// HTTP front's does) and, unless refuse is set, takes an answer without
// waiting (answerTaker).
type answerStream struct {
	mu     sync.Mutex
	refuse bool
	ways   []string // how each message came: "now", "related", "write"
}

func (s *answerStream) Read() ([]byte, error) { select {} }
func (s *answerStream) Close() error          { return nil }
func (s *answerStream) Write(ctx context.Context, m []byte) error {
	return s.note("write")
}
func (s *answerStream) WriteRelated(ctx context.Context, m []byte, related jsonrpc.ID, final bool) error {
	return s.note("related")
}
func (s *answerStream) TryWriteAnswer(m []byte, related jsonrpc.ID) bool {
	s.mu.Lock()
	refuse := s.refuse
	s.mu.Unlock()
	if refuse {
		return false
	}
	s.note("now")
	return true
}
func (s *answerStream) note(way string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ways = append(s.ways, way)
	return nil
}

// An answer a server's reader hands to a client stream that takes answers
// without waiting (an HTTP POST's) goes to it on the reader's goroutine:
// the outbox's writer goroutine is not woken, which cost a handoff on
// every HTTP call. A stream that cannot take it now leaves it to the
// writer goroutine, as before.
func TestOutboxHandsAnswersOn(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := &answerStream{}
		q := newOutbox(s, sessionQueueBytes, true, time.Second, nil)
		synctest.Wait()
		for i := range 10 {
			taken, err := q.WriteNoWait([]byte(fmt.Sprintf(`{"id":%d,"result":{}}`, i)), jsonrpc.IntID(int64(i)), true, nil)
			if !taken || err != nil {
				t.Fatalf("answer %d: taken %v, %v", i, taken, err)
			}
			synctest.Wait() // the writer goroutine, if woken, has run
		}
		q.mu.Lock()
		wakes := q.wakes
		q.mu.Unlock()
		s.mu.Lock()
		ways := strings.Join(s.ways, ",")
		s.ways, s.refuse = nil, true
		s.mu.Unlock()
		if wakes > 0 || ways != strings.TrimSuffix(strings.Repeat("now,", 10), ",") {
			t.Errorf("10 answers went %s, the writer goroutine woken %d times; want each handed on by its caller", ways, wakes)
		}
		if taken, err := q.WriteNoWait([]byte(`{"id":10,"result":{}}`), jsonrpc.IntID(10), true, nil); !taken || err != nil {
			t.Fatalf("answer 10: taken %v, %v", taken, err)
		}
		synctest.Wait()
		s.mu.Lock()
		ways = strings.Join(s.ways, ",")
		s.mu.Unlock()
		if ways != "related" {
			t.Errorf("an answer the stream could not take now went %q; want it written by the writer goroutine (related)", ways)
		}
		q.Close()
	})
}
