package proxy

import (
	"testing"
	"testing/synctest"
	"time"
)

// A request's deadline passes step after the start, or after the last
// extension; extensions never push it past max, and then it says so.
func TestDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		expired := make(chan time.Duration, 1)
		dl := newDeadline(time.Second, 3*time.Second)
		dl.extend() // before start: nothing to push back
		dl.start(func(*deadline) { expired <- time.Since(start) })
		time.Sleep(900 * time.Millisecond)
		dl.extend() // progress: one more second from now
		time.Sleep(900 * time.Millisecond)
		dl.extend()
		select {
		case <-expired:
			t.Fatal("expired although progress came within each step")
		default:
		}
		time.Sleep(950 * time.Millisecond)
		dl.extend() // 2.75s: only 0.25s left before max
		if got := <-expired; got != 3*time.Second {
			t.Fatalf("expired after %v, want at max (3s)", got)
		}
		if !dl.hitLimit() {
			t.Fatal("hitLimit is false, though max cut the last extension short")
		}
	})
}

// While the server waits for the client (held), the deadline does not run:
// a person taking a minute to answer an elicitation is not a server taking
// a minute. Released, the step starts again, and max moves by the hold.
func TestDeadlineHeldWhileTheClientAnswers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		expired := make(chan time.Duration, 1)
		dl := newDeadline(time.Second, 3*time.Second)
		dl.start(func(*deadline) { expired <- time.Since(start) })
		time.Sleep(500 * time.Millisecond)
		dl.hold()
		dl.hold() // two requests to the client at once
		time.Sleep(time.Minute)
		dl.release()
		time.Sleep(10 * time.Second)
		dl.extend() // held still: progress moves nothing
		select {
		case <-expired:
			t.Fatal("expired while the server waited for the client")
		default:
		}
		dl.release() // at 70.5s: one more step
		if got := <-expired; got != 71500*time.Millisecond {
			t.Fatalf("expired after %v, want a step after the last release (71.5s)", got)
		}
	})
}

// The first retry of a failed server comes within about a second, later
// ones back off up to the cap, and each is random within its ceiling (full
// jitter), so that many gateways do not retry in step.
func TestBackoff(t *testing.T) {
	for n := 1; n <= 40; n++ {
		ceiling := min(backoffBase<<min(n, 30), 5*time.Minute)
		for range 200 {
			if d := backoff(n, 5*time.Minute); d <= 0 || d > ceiling+time.Millisecond {
				t.Fatalf("backoff(%d) = %v, want in (0, %v]", n, d, ceiling)
			}
		}
	}
	seen := map[time.Duration]bool{}
	for range 50 {
		seen[backoff(3, time.Minute)] = true
	}
	if len(seen) < 10 {
		t.Fatalf("backoff(3) took %d distinct values in 50 draws: not jittered", len(seen))
	}
}
