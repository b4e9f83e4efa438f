package proxy

import (
	"context"
	"time"

	"github.com/mcpgate/mcpgate/jsonrpc"
)

// A request to an upstream ends at its deadline wherever it is: waiting for
// a place among max_concurrent, for room in the outbox, or for the answer.
// A context derived for it (WithCancelCause, and the closure that cancels
// it) cost five allocations on every call, though the first two waits
// almost never happen. Instead the deadline, watching the request, is its
// context: the caller's, but ended by the deadline too. Only a wait that
// needs a channel makes a real context (slowContext); the wait for the
// answer is the caller's own, and the deadline ends the call instead
// (jsonrpc.Call.Abandon).

// callContext is a watched deadline seen as the request's context.
type callContext deadline

// watch starts d for the request made under ctx, and returns the context
// of its waits: ctx, ended by d too. end must be called when the request
// is over.
func (d *deadline) watch(ctx context.Context) context.Context {
	return d.watchFrom(ctx, time.Now())
}

// watchFrom is watch with the deadline counted from now: a request that
// read the clock as it began (an inline call, for its audit duration) lends
// that reading, one clock read a call less.
func (d *deadline) watchFrom(ctx context.Context, now time.Time) context.Context {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.parent = ctx
	d.startLocked((*deadline).fire, now)
	return (*callContext)(d)
}

// fire ends the request: its answer, if it was sent, is no longer waited
// for; a wait on its context ends.
func (d *deadline) fire() {
	d.mu.Lock()
	d.fired = true
	call, cancel := d.call, d.cancelSlow
	d.mu.Unlock()
	if call != nil {
		call.Abandon(errDeadline)
	}
	if cancel != nil {
		cancel(errDeadline)
	}
}

// sent tells d that the request went out as call: from now on the deadline
// ends it by abandoning the call, on which its caller waits.
func (d *deadline) sent(call *jsonrpc.Call) {
	d.mu.Lock()
	fired := d.fired
	d.call = call
	d.mu.Unlock()
	if fired {
		call.Abandon(errDeadline)
	}
}

// expired reports whether the deadline has passed.
func (d *deadline) expired() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.fired
}

// end stops d once its request is over.
func (d *deadline) end() {
	d.mu.Lock()
	d.stopLocked()
	d.ended = true
	cancel := d.cancelSlow
	d.mu.Unlock()
	if cancel != nil {
		cancel(nil)
	}
}

// slowContext is the parent ended by the deadline too, as a context of the
// context package, for a wait on its Done channel.
func (d *deadline) slowContext() context.Context {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.slow == nil {
		d.slow, d.cancelSlow = context.WithCancelCause(d.parent)
		if d.fired {
			d.cancelSlow(errDeadline)
		}
	}
	return d.slow
}

func (c *callContext) Deadline() (time.Time, bool) { return c.parent.Deadline() }

func (c *callContext) Value(key any) any { return c.parent.Value(key) }

// Err is not nil once Done is closed, whichever closed it: the context
// package cancels a derived context with it, and panics on nil.
func (c *callContext) Err() error {
	d := (*deadline)(c)
	d.mu.Lock()
	fired, ended := d.fired, d.ended
	d.mu.Unlock()
	if fired {
		return context.Canceled
	}
	if err := c.parent.Err(); err != nil || !ended {
		return err
	}
	return context.Canceled
}

func (c *callContext) Done() <-chan struct{} { return (*deadline)(c).slowContext().Done() }

// AfterFunc lets context.AfterFunc and the contexts derived from this one
// follow it without a goroutine of their own.
func (c *callContext) AfterFunc(f func()) (stop func() bool) {
	return context.AfterFunc((*deadline)(c).slowContext(), f)
}
