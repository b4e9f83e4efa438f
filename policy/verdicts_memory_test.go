package policy

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
	"weak"

	"github.com/mcpgate/mcpgate/internal/detect/injection"
)

// TestVerdictsKeepNoOldList: the places keep the bytes of the lists last
// checked, not of every list before: a server whose list shrinks by one
// definition at each fetch, each list read into a page of its own (the
// same definitions, so no verdict is made and nothing is forgotten), must
// not have its old pages kept alive, one per place past the new end.
func TestVerdictsKeepNoOldList(t *testing.T) {
	const defs, defSize = 256, 1 << 10
	all := make([]string, defs)
	for i := range all {
		head := fmt.Sprintf(`{"name":"t%d","description":"`, i)
		all[i] = head + strings.Repeat("a", defSize-len(head)-2) + `"}`
	}
	var v verdictCache
	var pages []weak.Pointer[byte]
	for n := defs; n > 0; n-- {
		page := []byte(strings.Join(all[:n], ""))
		pages = append(pages, weak.Make(&page[0]))
		for i := range n {
			def := page[i*defSize : (i+1)*defSize : (i+1)*defSize]
			v.check(injection.DefaultChecker, def, listOf{"fs", "tool"}, i, nil)
		}
	}
	runtime.GC()
	alive, bytes := 0, 0
	for i, p := range pages {
		if p.Value() != nil {
			alive++
			bytes += (defs - i) * defSize
		}
	}
	// The last list's page and the one before: a generous bound.
	if alive > 2 {
		t.Fatalf("after %d lists, each one definition shorter: %d of their pages still alive (%d KiB), want at most 2", defs, alive, bytes>>10)
	}
	runtime.KeepAlive(&v)
}
