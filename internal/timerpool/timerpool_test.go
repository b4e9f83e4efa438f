package timerpool

import (
	"testing"
	"testing/synctest"
	"time"
)

// A timer put back after it fired, its value never taken, does not fire
// early for whoever gets it next: it fires after the new duration, once.
func TestReusedTimerFiresOnItsOwnTime(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		first := Get(time.Millisecond)
		time.Sleep(2 * time.Millisecond) // synctest's fake clock: it fires, unread
		synctest.Wait()
		Put(first)
		start := time.Now()
		second := Get(time.Hour)
		select {
		case <-second.C:
			t.Fatal("a reused timer fired with its old value")
		default:
		}
		at := <-second.C
		if got := at.Sub(start); got != time.Hour {
			t.Errorf("the reused timer fired after %v, want 1h", got)
		}
		Put(second)
	})
}

// A timer made in a bubble stays in it, and one from outside never goes
// in: either would be a fatal error or a bubble that never settles.
func TestTimersStayOnTheirSideOfABubble(t *testing.T) {
	outside := Get(time.Hour)
	Put(outside)
	synctest.Test(t, func(t *testing.T) {
		if !inBubble() {
			t.Fatal("inBubble is false in a bubble")
		}
		inside := Get(time.Millisecond)
		if inside == outside {
			t.Fatal("a timer from outside the bubble was reused in it")
		}
		<-inside.C // fires on the bubble's clock
		Put(inside)
	})
	if inBubble() {
		t.Fatal("inBubble is true outside a bubble")
	}
	again := Get(time.Hour)
	defer Put(again)
	again.Reset(time.Minute) // a bubble's timer here would be a fatal error
}
