package proxy

import (
	"context"
	"sync"
	"time"

	"github.com/mcpgate/mcpgate/jsonrpc"
)

// deadline ends a request after step without an answer; each extend (a
// progress notification) starts the step again, but never past limit. It is
// made before the request is sent, so that the progress table can hold it,
// and started by the call. It serves one request.
type deadline struct {
	mu      sync.Mutex
	timer   *time.Timer // nil until start
	step    time.Duration
	max     time.Duration
	limit   time.Time
	atLimit bool      // the last reset was cut short by limit
	holds   int       // while above 0 (the server waits for the client), the deadline does not run
	held    time.Time // when the holds began

	// The request it ends, when watched (see callctx.go).
	parent     context.Context // the caller's context
	fired      bool
	ended      bool                    // the request is over (end): its context is done
	call       *jsonrpc.Call           // the request, once sent
	slow       context.Context         // parent ended by the deadline too; made only when waited on
	cancelSlow context.CancelCauseFunc // slow's
	caller     caller                  // the request as a caller of the server (see addCaller)
}

func newDeadline(step, max time.Duration) *deadline {
	return &deadline{step: step, max: max}
}

// start arms the deadline: expire is called when it passes.
func (d *deadline) start(expire func()) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.limit = time.Now().Add(d.max)
	d.timer = time.AfterFunc(d.step, expire)
}

// hold stops the deadline until release: the server waits for the
// client. Both limits wait: the step, and the max_timeout (by as long as
// the hold lasted).
func (d *deadline) hold() {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.holds++; d.holds == 1 && d.timer != nil {
		d.timer.Stop()
		d.held = time.Now()
	}
}

// release ends a hold; the last one starts the step again.
func (d *deadline) release() {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.holds--; d.holds == 0 && d.timer != nil && !d.held.IsZero() {
		d.limit = d.limit.Add(time.Since(d.held))
		d.held = time.Time{}
		d.resetLocked()
	}
}

func (d *deadline) extend() {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.timer == nil || d.holds > 0 {
		return // not started, or held: there is nothing to push back
	}
	d.resetLocked()
}

// resetLocked starts the step again, cut short by the limit. d.mu held.
func (d *deadline) resetLocked() {
	left := time.Until(d.limit)
	next := d.step
	if left < next {
		next, d.atLimit = max(left, 0), true
	}
	d.timer.Reset(next)
}

// hitLimit reports whether the deadline that passed was limit.
func (d *deadline) hitLimit() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.atLimit
}

func (d *deadline) stop() {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.timer != nil {
		d.timer.Stop()
	}
}
