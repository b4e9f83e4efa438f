package jsonrpc

import (
	"context"
	"slices"
	"sync"
	"time"
)

// A request's handler runs under its inFlight, which is its context: it
// ends when the peer cancels the request (CancelIncoming), when the Conn
// cancels its handlers (CancelHandlers, Close), or when the handler has
// returned. A context.WithCancel of the Conn's context per request cost
// three allocations, and an entry added to and removed from the parent's
// children under its lock; this costs none until the handler asks for its
// Done channel, and the Conn ends the requests in incoming itself.
//
// It carries no values (the Conn's own context has none), so that
// context.Cause is its Err; contexts derived from it follow it through
// its AfterFunc, without a goroutine each.

// handlerContext is the part of inFlight that is its context.
type handlerContext struct {
	mu    sync.Mutex
	err   error           // why it ended; nil while it lasts
	done  chan struct{}   // made when first asked for, or closedDone
	after []*afterHandler // what AfterFunc registered, to run when it ends
	ended Ender           // what Reply.OnEnd registered, to tell when it ends
}

type afterHandler struct{ f func() }

// closedDone is the Done of a context that ended before anyone asked.
var closedDone = func() chan struct{} {
	ch := make(chan struct{})
	close(ch)
	return ch
}()

var _ context.Context = (*handlerContext)(nil)

func (h *handlerContext) Deadline() (time.Time, bool) { return time.Time{}, false }

func (h *handlerContext) Value(any) any { return nil }

func (h *handlerContext) Err() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.err
}

func (h *handlerContext) Done() <-chan struct{} {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.done == nil {
		h.done = make(chan struct{})
	}
	return h.done
}

// AfterFunc runs f once the context has ended, as context.AfterFunc does
// (f runs on a goroutine of its own when it has ended already); stop
// unregisters it, and reports whether it did so before f was started.
func (h *handlerContext) AfterFunc(f func()) (stop func() bool) {
	a := &afterHandler{f}
	h.mu.Lock()
	if h.err != nil {
		h.mu.Unlock()
		go f()
		return func() bool { return false }
	}
	h.after = append(h.after, a)
	h.mu.Unlock()
	return func() bool {
		h.mu.Lock()
		defer h.mu.Unlock()
		i := slices.Index(h.after, a)
		if i < 0 {
			return false
		}
		h.after = slices.Delete(h.after, i, i+1)
		return true
	}
}

// end ends the context with err, once; what AfterFunc registered runs
// now, on this goroutine, without h.mu held.
func (h *handlerContext) end(err error) {
	h.mu.Lock()
	if h.err != nil {
		h.mu.Unlock()
		return
	}
	h.err = err
	if h.done == nil {
		h.done = closedDone
	} else {
		close(h.done)
	}
	after, ended := h.after, h.ended
	h.after, h.ended = nil, nil
	h.mu.Unlock()
	for _, a := range after {
		a.f()
	}
	if ended != nil {
		ended.Ended()
	}
}

// endHandlers ends the context of every request being handled: the Conn
// cancels its handlers. One that arrives later is ended as it comes (see
// serve).
func (c *Conn) endHandlers() {
	c.mu.Lock()
	flights := make([]*inFlight, 0, len(c.incoming))
	for _, f := range c.incoming {
		flights = append(flights, f)
	}
	c.mu.Unlock()
	for _, f := range flights {
		f.end(context.Canceled)
	}
}
