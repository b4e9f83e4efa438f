package proxy

import (
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

// The deadlines of one upstream's requests share one timer: each passes at
// its own time, one stopped or pushed back does not pass at its old time,
// and none is left armed once every request is over.
func TestDeadlinesShareOneTimer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var w deadlineWheel
		start := time.Now()
		passed := make(chan string, 4)
		deadlineAfter := func(name string, step time.Duration) *deadline {
			d := newDeadlineOn(&w, step, time.Hour)
			d.start(func(*deadline) { passed <- name + " at " + time.Since(start).String() })
			return d
		}
		first := deadlineAfter("first", time.Second)
		answered := deadlineAfter("answered", 2*time.Second)
		pushed := deadlineAfter("pushed", 3*time.Second)
		last := deadlineAfter("last", 4*time.Second)
		if got := <-passed; got != "first at 1s" {
			t.Fatalf("passed: %s; want first at 1s", got)
		}
		time.Sleep(500 * time.Millisecond)
		answered.stop()
		time.Sleep(time.Second) // 2.5s
		pushed.extend()         // a step from now: to 5.5s
		for _, want := range []string{"last at 4s", "pushed at 5.5s"} {
			if got := <-passed; got != want {
				t.Fatalf("passed: %s; want %s", got, want)
			}
		}
		time.Sleep(time.Minute)
		select {
		case got := <-passed:
			t.Fatalf("passed: %s; want nothing more", got)
		default:
		}
		for _, d := range []*deadline{first, answered, pushed, last} {
			d.stop()
		}
		w.mu.Lock()
		defer w.mu.Unlock()
		if len(w.armed) != 0 {
			t.Fatalf("%d deadlines armed once every request is over", len(w.armed))
		}
	})
}

// A deadline earlier than every armed one (a reload shortened the timeout)
// passes at its own time, not at theirs; one armed after the wheel emptied
// passes at its time, not at the stale one it was set for; a held deadline
// does not pass while held, and passes a step after its release.
func TestDeadlineWheelFollowsTheEarliest(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var w deadlineWheel
		start := time.Now()
		passed := make(chan string, 8)
		deadlineAfter := func(name string, step time.Duration) *deadline {
			d := newDeadlineOn(&w, step, time.Hour)
			d.start(func(*deadline) { passed <- name + " at " + time.Since(start).String() })
			return d
		}
		expect := func(want string) {
			t.Helper()
			if got := <-passed; got != want {
				t.Fatalf("passed: %s; want %s", got, want)
			}
		}
		long := deadlineAfter("long", 10*time.Second)
		deadlineAfter("short", 2*time.Second)
		expect("short at 2s")
		long.stop() // the wheel is empty; its timer was set for 10s
		time.Sleep(time.Second)
		deadlineAfter("after", 10*time.Second) // 3s: at 13s, after the stale 10s
		held := deadlineAfter("held", time.Second)
		held.hold()
		time.Sleep(5 * time.Second) // 8s
		held.release()              // a step from now: 9s
		expect("held at 9s")
		expect("after at 13s")
		time.Sleep(time.Minute)
		select {
		case got := <-passed:
			t.Fatalf("passed: %s; want nothing more", got)
		default:
		}
	})
}

// A deadline stopped (its request answered) stays stopped: a progress
// notice or a release that comes after it does not arm it again, which
// kept the request's deadline in the wheel, and fired it, a step later.
func TestStoppedDeadlineStaysStopped(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var w deadlineWheel
		var fired atomic.Int32
		d := newDeadlineOn(&w, time.Second, time.Hour)
		d.start(func(*deadline) { fired.Add(1) })
		held := newDeadlineOn(&w, time.Second, time.Hour)
		held.start(func(*deadline) { fired.Add(1) })
		held.hold()
		d.stop()
		held.stop()
		d.extend()
		held.release()
		time.Sleep(time.Minute)
		if n := fired.Load(); n != 0 {
			t.Errorf("stopped deadlines passed %d times", n)
		}
		w.mu.Lock()
		defer w.mu.Unlock()
		if len(w.armed) != 0 {
			t.Errorf("%d stopped deadlines armed", len(w.armed))
		}
	})
}
