// Package timerpool reuses stopped timers. A time.Timer is three
// allocations; a gateway session made for one modern HTTP request made two
// (its outbox's grace on close, its handler goroutine's idle timer), and
// reusing them is safe since Go 1.23: after Stop or Reset no value from
// before is received from the timer's channel.
package timerpool

import (
	"sync"
	"time"
)

var timers sync.Pool

// Get returns a timer that fires after d.
func Get(d time.Duration) *time.Timer {
	if !inBubble() {
		if t, ok := timers.Get().(*time.Timer); ok {
			t.Reset(d)
			return t
		}
	}
	return time.NewTimer(d)
}

// Put stops t and keeps it for Get. Nobody may use t after.
func Put(t *time.Timer) {
	t.Stop()
	if !inBubble() {
		timers.Put(t)
	}
}

// inBubble reports whether the caller runs in a testing/synctest bubble,
// whose timers run on its fake clock: one of them used outside it is a
// fatal error, and a real one inside it would keep the bubble from ever
// being idle, so neither crosses over. Only a bubble's clock reads no
// monotonic time (see runtime's time_now), and Round(0) strips that
// reading.
func inBubble() bool {
	now := time.Now()
	return now == now.Round(0)
}
