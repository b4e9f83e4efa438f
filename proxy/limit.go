package proxy

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/mcpgate/mcpgate/jsonrpc"
)

// limiter bounds the requests in flight to one server (max_concurrent):
// the rest wait, first come first served, in a queue bounded by max_queued,
// each no longer than its own deadline. Without a limit it only counts, for
// the metrics.
//
// A place freed goes straight to the oldest waiter (its channel is closed
// with the place already counted as its own), so that a newcomer can never
// overtake the queue between a release and the waiter waking.
type limiter struct {
	max, maxQueued int // 0: no limit

	mu       sync.Mutex
	inFlight int             // places taken, including those handed to waiters not yet awake
	queue    []chan struct{} // waiters, oldest first; closed when given a place

	giveBack func() // l.release, made once: a method value per request is an allocation
}

// errQueueFull is returned by acquire when max_queued requests already wait.
var errQueueFull = errors.New("queue full")

func newLimiter(max, maxQueued int) *limiter {
	l := &limiter{max: max, maxQueued: maxQueued}
	l.giveBack = l.release
	return l
}

// acquire takes a place, waiting for one within ctx. It returns the
// function that gives the place back (call it once), errQueueFull when the
// queue is full, or ctx's error when ctx ended first.
func (l *limiter) acquire(ctx context.Context) (func(), error) {
	l.mu.Lock()
	if l.max <= 0 || l.inFlight < l.max {
		l.inFlight++
		l.mu.Unlock()
		return l.giveBack, nil
	}
	if len(l.queue) >= l.maxQueued {
		l.mu.Unlock()
		return nil, errQueueFull
	}
	turn := make(chan struct{})
	l.queue = append(l.queue, turn)
	l.mu.Unlock()
	select {
	case <-turn:
		return l.giveBack, nil
	case <-ctx.Done():
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	for i, w := range l.queue {
		if w == turn {
			l.queue = append(l.queue[:i], l.queue[i+1:]...)
			return nil, ctx.Err()
		}
	}
	// Given a place as ctx ended: pass it on, since nobody will use it.
	l.releaseLocked()
	return nil, ctx.Err()
}

func (l *limiter) release() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.releaseLocked()
}

// releaseLocked gives a place back: to the oldest waiter, if any. l.mu held.
func (l *limiter) releaseLocked() {
	if len(l.queue) > 0 {
		close(l.queue[0])
		l.queue[0] = nil
		l.queue = l.queue[1:]
		return
	}
	l.inFlight--
}

// counts reports the requests in flight and waiting now.
func (l *limiter) counts() (inFlight, queued int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.inFlight, len(l.queue)
}

// acquirePlace takes one of the server's max_concurrent places for a
// request, waiting within tctx (the request's deadline). ctx is the
// caller's own: when it ended, its error is returned as it is.
func (u *upstream) acquirePlace(ctx, tctx context.Context, method string) (func(), error) {
	l := u.base.limit
	start := time.Now()
	release, err := l.acquire(tctx)
	switch {
	case err == nil:
		return release, nil
	case errors.Is(err, errQueueFull):
		return nil, jsonrpc.Errorf(errUnavailable, "upstream %q: %s in flight (max_concurrent %d) and %d waiting (max_queued %d): %s refused; try again later, or raise mcpServers.%s.max_concurrent or max_queued",
			u.name, requests(l.max), l.max, l.maxQueued, l.maxQueued, method, u.name)
	case ctx.Err() != nil:
		return nil, ctx.Err()
	}
	return nil, jsonrpc.Errorf(errTimeout, "upstream %q: %s waited %v for one of its max_concurrent (%d) places, and its deadline passed; raise mcpServers.%s.max_concurrent or timeout",
		u.name, method, time.Since(start).Round(time.Millisecond), l.max, u.name)
}

func requests(n int) string {
	if n == 1 {
		return "1 request"
	}
	return fmt.Sprintf("%d requests", n)
}
