package proxy

import (
	"log/slog"
	"slices"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate/config"
)

// An instance a client's request obtained is not stopped as idle before
// the request ends, however long the request takes to send to it (on a
// loaded machine, policies and max_concurrent come first): it used to be
// idle from the moment it was handed out until the request was in flight,
// and a request slower than idle_timeout lost its instance, and started
// another. Once the request ends, the idle time counts from then.
func TestInstanceHeldByItsRequest(t *testing.T) {
	cfg := &config.Config{Namespace: true, Servers: []config.Server{{
		Name: "iso", Type: config.TypeStdio, Command: "false", Isolation: config.IsolationSession,
		MaxInstances: 2, IdleTimeout: 100 * time.Millisecond, Timeout: time.Second, MaxTimeout: time.Second, InitTimeout: time.Second,
	}}}
	g, err := New(cfg, Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	base := g.live().byName["iso"]
	s := &session{g: g, id: "s"}
	hold := &setHold{set: g.holdLive()}
	inst, err := base.instanceFor(s, hold)
	if err != nil {
		t.Fatal(err)
	}
	// Only the request's hold may keep it: no supervisor, no attempt.
	inst.endSupervisor()
	<-inst.supervised
	inst.mu.Lock()
	inst.attempt = nil
	inst.mu.Unlock()
	longAgo := time.Now().Add(-time.Hour).UnixNano()

	inst.lastUsed.Store(longAgo)
	if slices.Contains(base.idleInstances(), inst) {
		t.Fatal("the instance was taken as idle while the request that obtained it had not ended")
	}
	hold.release()
	if slices.Contains(base.idleInstances(), inst) {
		t.Fatal("the instance was taken as idle at once when its request ended; idle_timeout counts from then")
	}
	inst.lastUsed.Store(longAgo)
	if !slices.Contains(base.idleInstances(), inst) {
		t.Fatal("the instance was not idle long after its request ended")
	}
}
