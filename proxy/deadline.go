package proxy

import (
	"sync"
	"time"
)

// deadline ends a request after step without an answer; each extend (a
// progress notification) starts the step again, but never past limit. It is
// made before the request is sent, so that the progress table can hold it,
// and started by the call.
type deadline struct {
	mu      sync.Mutex
	timer   *time.Timer // nil until start
	step    time.Duration
	max     time.Duration
	limit   time.Time
	atLimit bool // the last reset was cut short by limit
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

func (d *deadline) extend() {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.timer == nil {
		return // not started: there is nothing to push back yet
	}
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
