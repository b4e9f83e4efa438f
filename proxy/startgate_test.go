package proxy

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mcpgate/mcpgate/config"
)

// A request to a server whose start waits in start_concurrency's gate
// waits for it: the server's init_timeout begins when its start does, not
// while other servers' starts hold every place.
func TestConnectionWaitsOutTheStartGate(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		u := &upstream{name: "quick", cfg: config.Server{InitTimeout: time.Second}, state: stateConnecting, attempt: make(chan struct{})}
		u.inGate.Store(true)
		type answer struct {
			w   *wire
			err error
		}
		got := make(chan answer, 1)
		go func() {
			w, err := u.connectionCtx(context.Background())
			got <- answer{w, err}
		}()
		time.Sleep(time.Minute) // the gate held by slow starts
		synctest.Wait()
		select {
		case a := <-got:
			t.Fatalf("gave up while the start waited in the gate: %v", a.err)
		default:
		}

		u.inGate.Store(false) // its start begins, and ends connected
		w := &wire{}
		u.mu.Lock()
		u.state, u.wire = stateConnected, w
		close(u.attempt)
		u.attempt = nil
		u.mu.Unlock()
		if a := <-got; a.err != nil || a.w != w {
			t.Fatalf("connection = %v, %v; want the new wire", a.w, a.err)
		}
	})
}

// Once the start has left the gate, its init_timeout (and a second more)
// bounds the wait as before.
func TestConnectionWaitEndsAfterInitTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		u := &upstream{name: "quick", cfg: config.Server{InitTimeout: time.Second}, state: stateConnecting, attempt: make(chan struct{})}
		start := time.Now()
		if _, err := u.connectionCtx(context.Background()); err == nil {
			t.Fatal("connected; want still starting")
		}
		if waited := time.Since(start); waited != 2*time.Second {
			t.Errorf("waited %v, want init_timeout + 1s = 2s", waited)
		}
	})
}
