package proxy

import (
	"fmt"
	"testing"
)

// A page of a thousand tools is taken in with a few allocations per tool
// (its name, its item), not a split of its own per tool on top: the items
// are split in one pass, their members sharing one array.
func TestParseListPageAllocations(t *testing.T) {
	page := []byte(`{"tools":[`)
	const n = 1000
	for i := range n {
		if i > 0 {
			page = append(page, ',')
		}
		page = fmt.Appendf(page, `{"name":"tool_%d","description":"Does thing %d.","inputSchema":{"type":"object"},"annotations":{"readOnlyHint":true}}`, i, i)
	}
	page = append(page, "]}"...)
	allocs := testing.AllocsPerRun(5, func() {
		items, _, err := parseListPage(page, kindTools)
		if err != nil || len(items) != n {
			t.Fatalf("%d items, %v", len(items), err)
		}
	})
	// The name of each tool is a string of its own; everything else is
	// shared. A member list per tool, or a copied key, would be 2n or more.
	if allocs > 1.5*n {
		t.Errorf("a page of %d tools took %.0f allocations, want at most %d", n, allocs, 3*n/2)
	}
}
