package proxy

import (
	"sync"
	"time"
)

// deadline ends a request after step without an answer; each extend (a
// progress notification) starts the step again, but never past limit.
type deadline struct {
	mu      sync.Mutex
	timer   *time.Timer
	step    time.Duration
	limit   time.Time
	atLimit bool // the last reset was cut short by limit
}

func newDeadline(step, max time.Duration, expire func()) *deadline {
	d := &deadline{step: step, limit: time.Now().Add(max)}
	d.timer = time.AfterFunc(step, expire)
	return d
}

func (d *deadline) extend() {
	d.mu.Lock()
	defer d.mu.Unlock()
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

func (d *deadline) stop() { d.timer.Stop() }
