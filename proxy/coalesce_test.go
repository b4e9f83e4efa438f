package proxy

import (
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

// newTestCoalescer counts runs and checks that at most one is in flight and
// that begin and end pair up.
func newTestCoalescer(t *testing.T, work time.Duration) (*coalescer, *atomic.Int64, *sync.WaitGroup) {
	var runs atomic.Int64
	var inFlight atomic.Int64
	var owner sync.WaitGroup
	c := &coalescer{delay: 10 * time.Millisecond}
	c.begin = func() bool { owner.Add(1); return true }
	c.end = owner.Done // a second end for one begin panics: negative counter
	c.run = func() {
		if inFlight.Add(1) > 1 {
			t.Error("two runs at once")
		}
		runs.Add(1)
		time.Sleep(work)
		inFlight.Add(-1)
	}
	return c, &runs, &owner
}

// A burst is one run; notifications during a run are one more; whatever
// the timing, a notification is never lost (a run starts after it).
func TestCoalescerBursts(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, runs, owner := newTestCoalescer(t, 50*time.Millisecond)
		for range 100 {
			c.notify() // one burst
		}
		time.Sleep(20 * time.Millisecond) // past the delay: the run has begun
		if got := runs.Load(); got != 1 {
			t.Fatalf("a burst gave %d runs, want 1", got)
		}
		for range 100 {
			c.notify() // during the run
		}
		owner.Wait()
		if got := runs.Load(); got != 2 {
			t.Fatalf("notifications during a run gave %d runs in all, want 2", got)
		}
		// Every 5 ms for a while: each notification pushes the run back.
		for range 20 {
			c.notify()
			time.Sleep(5 * time.Millisecond)
		}
		owner.Wait()
		if got := runs.Load(); got != 3 {
			t.Fatalf("a slow burst gave %d more runs, want 1", got-2)
		}
	})
}

// Notifications at any timing, from many goroutines, never run the work
// twice at once, never end it twice (which used to panic with a negative
// WaitGroup counter when a fired timer was reset), and the last
// notification always gets its run.
func TestCoalescerAnyTiming(t *testing.T) {
	c, runs, owner := newTestCoalescer(t, 0)
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			deadline := time.Now().Add(300 * time.Millisecond)
			for time.Now().Before(deadline) {
				c.notify()
				time.Sleep(time.Duration(rand.IntN(12000)) * time.Microsecond)
			}
		}()
	}
	wg.Wait()
	before := runs.Load()
	c.notify()
	owner.Wait()
	if runs.Load() <= before {
		t.Fatal("the last notification got no run")
	}
}

// stop cancels a pending run, and no begin is left unended.
func TestCoalescerStop(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, runs, owner := newTestCoalescer(t, 0)
		c.notify()
		c.stop()
		owner.Wait()
		c.notify()
		time.Sleep(time.Second)
		if got := runs.Load(); got != 0 {
			t.Fatalf("%d runs after stop", got)
		}
	})
}
