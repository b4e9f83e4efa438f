package proxy

import (
	"testing"

	"github.com/mcpgate/mcpgate/config"
	"github.com/mcpgate/mcpgate/policy"
)

// The results held by decisions left running past their answers are
// bounded in bytes, all calls together: past the budget (twice the largest
// message, 64 MiB at least) a call's decisions are made before its answer,
// and what a finished one held is given back.
func TestLateDecisionsBounded(t *testing.T) {
	g := &Gateway{metrics: newMetrics()}
	g.liveSet.Store(&upstreamSet{cfg: &config.Config{MaxMessage: 50 << 20}})
	if got := g.lateBudget(); got != 100<<20 {
		t.Fatalf("budget %d, want twice max_message_bytes", got)
	}
	if !g.reserveLate(60<<20) || !g.reserveLate(40<<20) {
		t.Fatal("results within the budget refused")
	}
	if g.reserveLate(1) {
		t.Fatal("a result past the budget was left to be decided after its answer")
	}
	rec := &auditRecord{rest: func() []policy.Record { return nil }, lateBytes: 60 << 20}
	g.background.Add(1)
	g.recordDecided(rec)
	if !g.reserveLate(60 << 20) {
		t.Error("the budget a recorded call held was not given back")
	}
	g.liveSet.Store(&upstreamSet{cfg: &config.Config{MaxMessage: 1 << 20}})
	if got := g.lateBudget(); got != 64<<20 {
		t.Errorf("budget %d, want 64 MiB at least", got)
	}
}
