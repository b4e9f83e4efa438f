package httpfront

import (
	"testing"

	"github.com/mcpgate/mcpgate/jsonrpc"
)

// Requests sharing an id are given back latest first, each its own size,
// and the session's end gives back whatever is still held.
func TestHeldBodiesSharedIDLatestFirst(t *testing.T) {
	budget := &bodyBudget{max: 1000}
	h := &heldBodies{budget: budget}
	a, b := jsonrpc.IntID(1), jsonrpc.IntID(2)
	for _, n := range []int64{10, 20, 30} {
		if !h.hold(a, n) {
			t.Fatalf("hold(%d) refused with %d of %d in use", n, budget.inUse(), budget.max)
		}
	}
	h.hold(b, 100)
	steps := []struct {
		id    jsonrpc.ID
		inUse int64
	}{
		{a, 130}, // 30, the latest of id 1, given back
		{a, 110}, // then 20
		{b, 10},
		{b, 10}, // nothing more held for id 2
	}
	for i, step := range steps {
		h.answered(step.id)
		if got := budget.inUse(); got != step.inUse {
			t.Fatalf("step %d: answered(%s): %d bytes in use, want %d", i, step.id, got, step.inUse)
		}
	}
	h.hold(a, 40)
	h.end()
	if got := budget.inUse(); got != 0 {
		t.Fatalf("after end: %d bytes in use, want 0", got)
	}
	if !h.hold(a, 999) || budget.inUse() != 0 {
		t.Fatalf("a hold after end counts: %d bytes in use, want 0", budget.inUse())
	}
}
