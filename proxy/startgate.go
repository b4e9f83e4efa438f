package proxy

import (
	"context"
	"errors"
	"sync/atomic"
)

// startGate bounds the upstreams being started at once (start_concurrency):
// a config of fifty npx servers must not fork fifty Node.js processes on a
// laptop in the same second. A start holds its place from launching the
// process (or reaching the URL) to the end of the handshake, so a server
// slow to initialize holds one place, never more, for at most its
// init_timeout. Reconnections and per-session instances take places too.
type startGate struct {
	places   chan struct{} // start_concurrency-buffered: a token per start under way
	starting atomic.Int64  // starts holding a place
	waiting  atomic.Int64  // starts waiting for one
}

func newStartGate(n int) *startGate {
	return &startGate{places: make(chan struct{}, max(n, 1))}
}

// enter waits for a place, within ctx, and returns the function that gives
// it back.
func (s *startGate) enter(ctx context.Context) (func(), error) {
	select {
	case s.places <- struct{}{}:
	default:
		s.waiting.Add(1)
		select {
		case s.places <- struct{}{}:
			s.waiting.Add(-1)
		case <-ctx.Done():
			s.waiting.Add(-1)
			return nil, ctx.Err()
		}
	}
	s.starting.Add(1)
	return func() {
		s.starting.Add(-1)
		<-s.places
	}, nil
}

// dialGated is dial once the gateway's start gate lets the start go.
func (u *upstream) dialGated(ctx context.Context) (*wire, error) {
	u.inGate.Store(true)
	leave, err := u.g.starts.enter(ctx)
	u.inGate.Store(false)
	if err != nil {
		return nil, errors.New(u.stopReason())
	}
	defer leave()
	return u.dial(ctx)
}
