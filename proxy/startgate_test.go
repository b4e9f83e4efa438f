package proxy

import (
	"context"
	"io"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mcpgate/mcpgate/config"
	"github.com/mcpgate/mcpgate/jsonrpc"
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

// A request that comes after the connection ended, before the supervisor
// has seen it end (it is finding out why), waits for the next attempt as
// after any failure, rather than fail on the dead connection.
func TestConnectionEndedUnseenWaitsForTheNext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		dead := jsonrpc.NewConn(jsonrpc.NewLineStream(strings.NewReader(""), io.Discard, nil, 0), jsonrpc.Options{}).Start()
		<-dead.Done()
		u := &upstream{name: "calc", cfg: config.Server{InitTimeout: time.Minute}, state: stateConnected, wire: &wire{conn: dead}, kick: make(chan struct{}, 1)}
		got := make(chan *wire, 1)
		go func() {
			w, _ := u.connectionCtx(context.Background())
			got <- w
		}()
		synctest.Wait()
		select {
		case <-u.kick:
		default:
			t.Fatal("no attempt asked for")
		}
		select {
		case w := <-got:
			t.Fatalf("answered %p at once; want a wait for the next attempt", w)
		default:
		}

		next := &wire{}
		u.mu.Lock()
		u.wire = next
		close(u.attempt)
		u.attempt = nil
		u.mu.Unlock()
		if w := <-got; w != next {
			t.Fatalf("connection %p, want the new one %p", w, next)
		}
	})
}
