package proxy

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"
)

// A watched deadline is its request's context: the caller's, ended by the
// deadline too, for every way of waiting on it (Done, context.AfterFunc,
// a context derived from it), and pushed back by progress as before.
func TestCallContextEndsAtTheDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		dl := newDeadline(time.Second, 3*time.Second)
		ctx := dl.watch(context.Background())
		defer dl.end()
		derived, cancel := context.WithCancel(ctx)
		defer cancel()
		after := make(chan time.Duration, 1)
		context.AfterFunc(ctx, func() { after <- time.Since(start) })
		time.Sleep(900 * time.Millisecond)
		dl.extend()
		if ctx.Err() != nil || dl.expired() {
			t.Fatalf("ended before its deadline: %v", ctx.Err())
		}
		<-ctx.Done()
		if got := time.Since(start); got != 1900*time.Millisecond {
			t.Fatalf("ended after %v, want 1.9s (a step after the progress)", got)
		}
		if got := <-after; got != 1900*time.Millisecond {
			t.Fatalf("AfterFunc ran after %v, want 1.9s", got)
		}
		<-derived.Done()
		if !errors.Is(ctx.Err(), context.Canceled) || !dl.expired() {
			t.Fatalf("after the deadline: Err %v, expired %v", ctx.Err(), dl.expired())
		}
	})
}

// The caller's context ending ends the request's too; its deadline has
// not passed.
func TestCallContextEndsWithTheCaller(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		parent, cancel := context.WithCancel(context.Background())
		dl := newDeadline(time.Minute, time.Hour)
		ctx := dl.watch(parent)
		defer dl.end()
		type key struct{}
		if ctx.Value(key{}) != nil {
			t.Fatal("a value from nowhere")
		}
		cancel()
		<-ctx.Done()
		if !errors.Is(ctx.Err(), context.Canceled) || dl.expired() {
			t.Fatalf("Err %v, expired %v: want the caller's cancellation, not the deadline", ctx.Err(), dl.expired())
		}
	})
}

// A context asked for its channel after the deadline passed is already
// done.
func TestCallContextDoneAfterTheDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		dl := newDeadline(time.Second, time.Second)
		ctx := dl.watch(context.Background())
		defer dl.end()
		time.Sleep(2 * time.Second)
		select {
		case <-ctx.Done():
		default:
			t.Fatal("Done is open a second after the deadline passed")
		}
	})
}

// A context derived from a request's follows it through the request's
// AfterFunc, as it followed the context package's own contexts, not on a
// goroutine of the context package's each.
func TestRequestContextDerivedWithoutGoroutine(t *testing.T) {
	handler := &afterFuncCounter{Context: context.Background(), done: make(chan struct{})}
	rc := &requestContext{Context: handler}
	_, cancel := context.WithCancel(rc)
	defer cancel()
	stop := context.AfterFunc(rc, func() {})
	defer stop()
	if handler.registered != 2 {
		t.Fatalf("%d of 2 derived contexts registered with the handler's context; the rest each wait on a goroutine", handler.registered)
	}
}

// afterFuncCounter is a context, such as a jsonrpc handler's, that derived
// contexts follow through its AfterFunc.
type afterFuncCounter struct {
	context.Context
	done       chan struct{}
	registered int
}

func (c *afterFuncCounter) Done() <-chan struct{} { return c.done }
func (c *afterFuncCounter) Value(any) any         { return nil }
func (c *afterFuncCounter) AfterFunc(f func()) func() bool {
	c.registered++
	return func() bool { return true }
}

// A request's context ends with its request (dl.end), and, done, it says
// why, as every context must: one derived from it and still waiting then
// is cancelled with that error. An Err of nil there made the context
// package panic ("missing cancel error") on the goroutine that cancels
// the derived context, which brought the whole gateway down.
func TestCallContextEndedWithItsRequest(t *testing.T) {
	dl := newDeadline(time.Minute, time.Hour)
	ctx := dl.watch(context.Background())
	derived, cancel := context.WithCancel(ctx)
	defer cancel()
	dl.end()
	<-ctx.Done()
	if !errors.Is(ctx.Err(), context.Canceled) {
		t.Fatalf("Done is closed and Err is %v, want context.Canceled", ctx.Err())
	}
	<-derived.Done()
	if !errors.Is(derived.Err(), context.Canceled) {
		t.Fatalf("derived: Err %v, want context.Canceled", derived.Err())
	}
}

// A deadline watched from a clock reading its request took as it began
// (an inline call's) counts from that reading, step and limit both, as
// watch counts from its own.
func TestCallContextCountsFromTheRequestsStart(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		began := time.Now()
		time.Sleep(300 * time.Millisecond) // the request's checks, before it is sent
		dl := newDeadline(time.Second, 1500*time.Millisecond)
		ctx := dl.watchFrom(context.Background(), began)
		defer dl.end()
		time.Sleep(600 * time.Millisecond)
		dl.extend() // a progress notice: a step more, cut short by the limit
		<-ctx.Done()
		if got := time.Since(began); got != 1500*time.Millisecond || !dl.expired() || !dl.hitLimit() {
			t.Fatalf("ended %v after the request began (expired %v, at its limit %v), want 1.5s, at its limit", got, dl.expired(), dl.hitLimit())
		}
	})
}
