package proxy

import (
	"fmt"
	"testing"
)

// TestMetricsMethodsBounded: made-up method names share one series, however
// many a client sends; methods mcpgate serves keep their own.
func TestMetricsMethodsBounded(t *testing.T) {
	m := newMetrics()
	for i := range 20_000 {
		m.observe(&auditRecord{Server: "mcpgate", Method: fmt.Sprintf("made/up/%d", i), Outcome: "error"})
	}
	m.observe(&auditRecord{Server: "fs", Method: methodToolsCall, Outcome: "ok"})
	want := map[requestKey]uint64{
		{"mcpgate", "other", "error"}: 20_000,
		{"fs", methodToolsCall, "ok"}: 1,
	}
	if len(m.requests) != len(want) {
		t.Fatalf("%d request series, want %d: %v", len(m.requests), len(want), m.requests)
	}
	for k, n := range want {
		if m.requests[k] != n {
			t.Errorf("requests%v = %d, want %d", k, m.requests[k], n)
		}
	}
}
