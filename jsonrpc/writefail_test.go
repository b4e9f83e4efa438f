package jsonrpc

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"
)

// closedStream is a peer that has left: its messages were read, and every
// write fails as a closed stream's does.
type closedStream struct {
	*memStream
	mu     sync.Mutex
	writes int
}

func (s *closedStream) Write(ctx context.Context, msg []byte) error {
	s.mu.Lock()
	s.writes++
	s.mu.Unlock()
	return ErrClosed
}

func (s *closedStream) attempted() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.writes
}

// A peer that sends many requests and leaves makes every answer's write
// fail the same way: that is reported once, not once per answer (a client
// could fill the log with a thousand lines each time it leaves).
func TestWritesToClosedPeerReportedOnce(t *testing.T) {
	const requests = 50
	s := &closedStream{memStream: newMemStream()}
	release := make(chan struct{})
	var mu sync.Mutex
	var bad []error
	c := NewConn(s, Options{
		Handler: HandlerFunc(func(ctx context.Context, msg *Message) (json.RawMessage, error) {
			<-release
			return json.RawMessage(`{}`), nil
		}),
		OnBadInput: func(err error) { mu.Lock(); bad = append(bad, err); mu.Unlock() },
	}).Start()
	defer c.Close()
	for i := range requests {
		s.in <- fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%d,"method":"work"}`, i)
	}
	close(release)
	deadline := time.Now().Add(20 * time.Second)
	reported := func() int { mu.Lock(); defer mu.Unlock(); return len(bad) }
	for s.attempted() < requests || reported() == 0 {
		if time.Now().After(deadline) {
			t.Fatalf("%d answers written, want %d", s.attempted(), requests)
		}
		time.Sleep(time.Millisecond) // polling for the handlers' writes and their report
	}
	mu.Lock()
	defer mu.Unlock()
	if len(bad) != 1 {
		t.Fatalf("%d failed writes reported, want 1: %v", len(bad), bad)
	}
}
