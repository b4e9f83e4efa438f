package proxy

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpgate/mcpgate/jsonrpc"
)

// deadline ends a request after step without an answer; each extend (a
// progress notification) starts the step again, but never past limit. It is
// made before the request is sent, so that the progress table can hold it,
// and started by the call. It serves one request.
type deadline struct {
	mu      sync.Mutex
	wheel   *deadlineWheel  // where it is armed (see deadlinewheel.go)
	expire  func(*deadline) // nil until start; a method expression, not a closure, costs no allocation
	seq     uint64          // counts armings and disarmings: a sweep that took an older one is ignored
	step    time.Duration
	max     time.Duration
	limit   time.Time
	atLimit bool         // the last reset was cut short by limit
	stopped bool         // by stop: the request is over, and nothing arms it again
	taken   atomic.Int32 // by sweeps of the wheel that have not passed it yet (see inlinepool.go)
	holds   int          // while above 0 (the server waits for the client), the deadline does not run
	held    time.Time    // when the holds began

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
	return newDeadlineOn(new(deadlineWheel), step, max)
}

// newDeadlineOn is a deadline armed on w, which the deadlines of one
// upstream's requests share.
func newDeadlineOn(w *deadlineWheel, step, max time.Duration) *deadline {
	d := new(deadline)
	d.init(w, step, max)
	return d
}

// init readies a deadline that is part of its request's own state (see
// inlineCall), as newDeadlineOn does a new one: one allocation a call less.
func (d *deadline) init(w *deadlineWheel, step, max time.Duration) {
	d.wheel, d.step, d.max = w, step, max
}

// start arms the deadline: expire is called when it passes.
func (d *deadline) start(expire func(*deadline)) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.startLocked(expire, time.Now())
}

// startLocked is start counted from now. d.mu held.
func (d *deadline) startLocked(expire func(*deadline), now time.Time) {
	d.limit = now.Add(d.max)
	d.expire = expire
	d.armLocked(now.Add(d.step))
}

// armLocked has the deadline pass at at. d.mu held.
func (d *deadline) armLocked(at time.Time) {
	d.seq++
	d.wheel.arm(d, at, d.seq)
}

// disarmLocked stops the deadline from passing until armed again. d.mu
// held.
func (d *deadline) disarmLocked() {
	d.seq++
	d.wheel.disarm(d)
}

// passed is told by the wheel that the arming seq passed: expire runs,
// unless the deadline was armed again or stopped since.
func (d *deadline) passed(seq uint64) {
	defer d.taken.Add(-1) // the sweep's last touch of d
	d.mu.Lock()
	current := d.seq == seq
	expire := d.expire
	d.mu.Unlock()
	if current {
		expire(d)
	}
}

// hold stops the deadline until release: the server waits for the
// client. Both limits wait: the step, and the max_timeout (by as long as
// the hold lasted).
func (d *deadline) hold() {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.holds++; d.holds == 1 && d.expire != nil {
		d.disarmLocked()
		d.held = time.Now()
	}
}

// release ends a hold; the last one starts the step again.
func (d *deadline) release() {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.holds--; d.holds == 0 && d.expire != nil && !d.stopped && !d.held.IsZero() {
		d.limit = d.limit.Add(time.Since(d.held))
		d.held = time.Time{}
		d.resetLocked()
	}
}

func (d *deadline) extend() {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.expire == nil || d.holds > 0 || d.stopped {
		return // not started, held or over: there is nothing to push back
	}
	d.resetLocked()
}

// resetLocked starts the step again, cut short by the limit. d.mu held.
func (d *deadline) resetLocked() {
	now := time.Now()
	left := d.limit.Sub(now)
	next := d.step
	if left < next {
		next, d.atLimit = max(left, 0), true
	}
	d.armLocked(now.Add(next))
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
	d.stopLocked()
}

// stopLocked is stop. d.mu held.
func (d *deadline) stopLocked() {
	if d.expire != nil {
		d.disarmLocked()
	}
	d.stopped = true // a late progress notice or release must not arm it again
}
