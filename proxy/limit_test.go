package proxy

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"
)

func TestLimiterQueuesInOrderAndRefusesPastTheBound(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := newLimiter(1, 2)
		release, err := l.acquire(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		var order []int
		done := make(chan struct{}, 2)
		for i := range 2 {
			go func() {
				rel, err := l.acquire(context.Background())
				if err != nil {
					t.Error(err)
					return
				}
				order = append(order, i) // one place: never two at once
				rel()
				done <- struct{}{}
			}()
			synctest.Wait() // waiter i is queued before the next comes
		}
		if in, q := l.counts(); in != 1 || q != 2 {
			t.Fatalf("counts = %d in flight, %d queued; want 1, 2", in, q)
		}
		if _, err := l.acquire(context.Background()); !errors.Is(err, errQueueFull) {
			t.Fatalf("a third waiter: err = %v, want errQueueFull", err)
		}
		release()
		<-done
		<-done
		if len(order) != 2 || order[0] != 0 || order[1] != 1 {
			t.Errorf("served in order %v, want [0 1]", order)
		}
		if in, q := l.counts(); in != 0 || q != 0 {
			t.Errorf("after all: %d in flight, %d queued; want 0, 0", in, q)
		}
	})
}

func TestLimiterWaitEndsAtTheDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := newLimiter(1, 10)
		release, _ := l.acquire(context.Background())
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		defer cancel()
		start := time.Now()
		_, err := l.acquire(ctx)
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("err = %v, want the deadline", err)
		}
		if waited := time.Since(start); waited != 3*time.Second {
			t.Errorf("waited %v, want exactly the deadline, 3s", waited)
		}
		if _, q := l.counts(); q != 0 {
			t.Errorf("%d still queued after giving up", q)
		}
		release()
		if in, _ := l.counts(); in != 0 {
			t.Errorf("%d in flight after the release", in)
		}
	})
}

func TestLimiterUnlimitedOnlyCounts(t *testing.T) {
	l := newLimiter(0, 0)
	var releases []func()
	for range 1000 {
		r, err := l.acquire(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		releases = append(releases, r)
	}
	if in, q := l.counts(); in != 1000 || q != 0 {
		t.Fatalf("counts = %d, %d; want 1000, 0", in, q)
	}
	for _, r := range releases {
		r()
	}
	if in, _ := l.counts(); in != 0 {
		t.Fatalf("%d in flight after releasing all", in)
	}
}

func TestAcquirePlaceErrorsNameTheServerAndTheLimit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		u := &upstream{name: "slow", limit: newLimiter(1, 1)}
		u.base = u
		release, err := u.acquirePlace(context.Background(), context.Background(), "tools/call")
		if err != nil {
			t.Fatal(err)
		}
		defer release()

		// The deadline passes while the request waits.
		tctx, cancel := context.WithTimeoutCause(context.Background(), 30*time.Second, errDeadline)
		defer cancel()
		_, err = u.acquirePlace(context.Background(), tctx, "tools/call")
		want := `upstream "slow": tools/call waited 30s for one of its max_concurrent (1) places, and its deadline passed; raise mcpServers.slow.max_concurrent or timeout`
		if err == nil || err.Error() != want || !errors.Is(err, errTimeout) {
			t.Errorf("at the deadline: %v\nwant %s (code -32001)", err, want)
		}

		// The client cancels while the request waits: its own error.
		ctx, cancelClient := context.WithCancel(context.Background())
		go func() {
			synctest.Wait()
			cancelClient()
		}()
		if _, err := u.acquirePlace(ctx, ctx, "tools/call"); !errors.Is(err, context.Canceled) {
			t.Errorf("cancelled by the client: %v, want context.Canceled", err)
		}
	})
}
