package proxy

import (
	"fmt"
	"testing"
)

// TestPinReportsBounded: the definitions told of as not pinned are
// remembered (to tell each once) up to a bound, whatever names a server
// makes up: one that lists ever-new tools, each withheld as not in the
// lock, must not grow the gateway's memory with every list.
func TestPinReportsBounded(t *testing.T) {
	g := testGateway(t, "fs")
	u := g.live().upstreams[0]
	for i := range 3 * maxPinReported {
		name := fmt.Sprintf("tool%d", i)
		g.reportPin(u, kindTools, item{name: name, raw: []byte(`{"name":"` + name + `"}`)}, nil, "not in the lock file")
	}
	g.mu.Lock()
	n := len(g.pinReported)
	g.mu.Unlock()
	if n > maxPinReported {
		t.Fatalf("after %d names told of: %d remembered, more than %d", 3*maxPinReported, n, maxPinReported)
	}
}

// A name told of already is not a new one: at the bound, telling it again
// keeps what is remembered (it cleared all, and a server withholding more
// than the bound had every definition told again at each fetch).
func TestPinReportsFullKeepsKnown(t *testing.T) {
	g := testGateway(t, "fs")
	u := g.live().upstreams[0]
	tell := func(i int) {
		name := fmt.Sprintf("tool%d", i)
		g.reportPin(u, kindTools, item{name: name, raw: []byte(`{"name":"` + name + `"}`)}, nil, "not in the lock file")
	}
	for i := range maxPinReported {
		tell(i)
	}
	tell(0)
	g.mu.Lock()
	n := len(g.pinReported)
	g.mu.Unlock()
	if n != maxPinReported {
		t.Fatalf("a known name told again at the bound left %d remembered, want %d", n, maxPinReported)
	}
}
