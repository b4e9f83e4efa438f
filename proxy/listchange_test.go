package proxy

import (
	"io"
	"log/slog"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate/config"
)

// testGateway builds a gateway over stdio servers that are never started.
func testGateway(t *testing.T, names ...string) *Gateway {
	t.Helper()
	cfg := &config.Config{Namespace: true}
	for _, n := range names {
		cfg.Servers = append(cfg.Servers, config.Server{Name: n, Type: config.TypeStdio, Command: "false", Timeout: time.Second, MaxTimeout: time.Second, InitTimeout: time.Second})
	}
	g, err := New(cfg, Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// A server sending list_changed at any timing (here every few ms, from
// several goroutines) gets one refresh at a time and never crashes the
// gateway: a debounce timer reset just as it fired used to run the refresh
// twice and panic ("negative WaitGroup counter") in a timer goroutine.
func TestListChangedAnyTiming(t *testing.T) {
	g := testGateway(t, "a")
	u := g.live().upstreams[0]
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for range 4 { // a busy gateway: the upstream's lock is in demand
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
					u.connected()
				}
			}
		}()
	}
	var notifiers sync.WaitGroup
	for range 4 {
		notifiers.Add(1)
		go func() {
			defer notifiers.Done()
			deadline := time.Now().Add(500 * time.Millisecond)
			for time.Now().Before(deadline) {
				u.listChanged(kindTools)
				if rand.IntN(4) == 0 {
					time.Sleep(time.Duration(rand.IntN(12000)) * time.Microsecond)
				}
			}
		}()
	}
	notifiers.Wait()
	close(stop)
	wg.Wait()
	g.Close()
}
