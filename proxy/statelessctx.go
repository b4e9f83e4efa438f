package proxy

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/mcpgate/mcpgate/jsonrpc"
)

// statelessCtx is the context of a stateless request served without a
// session (see statelesscall.go), as a connection's request has its
// handler context (jsonrpc): it ends when the client leaves (closing the
// response stream cancels the request), when mcpgate's shutdown grace
// runs out, or when the request is answered. It costs nothing until
// someone asks for its Done channel, and what derives from it follows it
// through AfterFunc, without a goroutine each (context.AfterFunc makes one
// for a context type it does not know).
type statelessCtx struct {
	mu        sync.Mutex
	err       error         // why it ended; nil while it lasts
	cancelled bool          // the client left: no answer goes out
	done      chan struct{} // made when first asked for, or closedChan
	after     []*statelessAfter
	ended     jsonrpc.Ender // what OnEndTell registered, to tell when it ends
}

type statelessAfter struct{ f func() }

// closedChan is the Done of a context that ended before anyone asked.
var closedChan = func() chan struct{} {
	ch := make(chan struct{})
	close(ch)
	return ch
}()

var _ context.Context = (*statelessCtx)(nil)

func (c *statelessCtx) Deadline() (time.Time, bool) { return time.Time{}, false }

func (c *statelessCtx) Value(any) any { return nil }

func (c *statelessCtx) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

func (c *statelessCtx) Done() <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.done == nil {
		c.done = make(chan struct{})
	}
	return c.done
}

// AfterFunc runs f once the context has ended, as context.AfterFunc does;
// stop unregisters it, and reports whether it did so before f started.
func (c *statelessCtx) AfterFunc(f func()) (stop func() bool) {
	a := &statelessAfter{f}
	c.mu.Lock()
	if c.err != nil {
		c.mu.Unlock()
		go f()
		return func() bool { return false }
	}
	c.after = append(c.after, a)
	c.mu.Unlock()
	return func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		i := slices.Index(c.after, a)
		if i < 0 {
			return false
		}
		c.after = slices.Delete(c.after, i, i+1)
		return true
	}
}

// onEnd registers e, told when the context ends; false, and e is not
// told, when it has ended already (as jsonrpc.Reply.OnEndTell).
func (c *statelessCtx) onEnd(e jsonrpc.Ender) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err != nil {
		return false
	}
	c.ended = e
	return true
}

// end ends the context with context.Canceled, once; clientLeft says the
// client is gone, so the answer is not sent. What AfterFunc registered,
// and the Ender, run now, on this goroutine, without c.mu held.
func (c *statelessCtx) end(clientLeft bool) {
	c.mu.Lock()
	if c.err != nil {
		c.mu.Unlock()
		return
	}
	c.err, c.cancelled = context.Canceled, clientLeft
	if c.done == nil {
		c.done = closedChan
	} else {
		close(c.done)
	}
	after, ended := c.after, c.ended
	c.after, c.ended = nil, nil
	c.mu.Unlock()
	for _, a := range after {
		a.f()
	}
	if ended != nil {
		ended.Ended()
	}
}

// clientLeft reports whether the client left before the answer.
func (c *statelessCtx) clientLeft() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.cancelled
}
