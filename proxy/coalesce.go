package proxy

import (
	"sync"
	"time"
)

// coalescer turns a burst of notifications into one run of work: run
// starts delay after the last notify of a burst; while it runs, any number
// of notifications cause exactly one more run after it. Never a storm,
// never a lost update.
//
// It has one owner of its timer: only notify arms it, only fire re-arms it,
// and a timer is never Reset, since resetting a timer that has just fired
// would run the work twice.
type coalescer struct {
	delay time.Duration
	run   func()
	// begin asks the coalescer's owner whether work may start (and counts
	// it); end says it is over. begin reports false once the owner stops.
	begin func() bool
	end   func()

	mu      sync.Mutex
	due     time.Time   // when the pending run may start: delay after the last notify
	timer   *time.Timer // armed while a run is pending; nil otherwise
	running bool
	again   bool // notified while running: run once more
	stopped bool
}

// notify says something changed.
func (c *coalescer) notify() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.stopped {
		return
	}
	if c.running {
		c.again = true
		return
	}
	c.due = time.Now().Add(c.delay)
	if c.timer != nil {
		return // the pending run sees the new due time when its timer fires
	}
	if !c.begin() {
		return
	}
	c.timer = time.AfterFunc(c.delay, c.fire)
}

func (c *coalescer) fire() {
	c.mu.Lock()
	if c.stopped {
		c.timer = nil
		c.mu.Unlock()
		c.end()
		return
	}
	if wait := time.Until(c.due); wait > 0 {
		c.timer = time.AfterFunc(wait, c.fire) // notified since it was armed
		c.mu.Unlock()
		return
	}
	c.timer = nil
	c.running = true
	c.mu.Unlock()
	defer c.end()
	for {
		c.run()
		c.mu.Lock()
		if c.again && !c.stopped {
			c.again = false
			c.mu.Unlock()
			continue
		}
		c.running, c.again = false, false
		c.mu.Unlock()
		return
	}
}

// stop ends the coalescer: a pending run is cancelled, a running one ends
// after its current pass, and notifications are ignored from now on.
func (c *coalescer) stop() {
	c.mu.Lock()
	c.stopped = true
	cancelled := c.timer != nil && c.timer.Stop()
	if cancelled {
		c.timer = nil
	}
	c.mu.Unlock()
	if cancelled {
		c.end()
	}
}
