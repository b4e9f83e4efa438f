package proxy_test

import (
	"context"
	"encoding/json"
	"testing"
)

// A modern (2026-07-28) tools/call on a stdio client session costs about
// what a legacy one does: it goes inline (see moderninline.go), its
// envelope is read once and taken out for the legacy server in the inline
// call's pooled buffer, and a call whose client declared nothing a server
// could ask it for is made as a plain one, not as an exchange with a
// goroutine, channels and an id of its own (see modernplain.go). The
// count is the whole process's, both sides; a legacy call takes 5
// (TestToolCallAllocations), a modern one 7 (its envelope, its
// resultType): 47 before the plain call, 31 before the envelope was taken
// out in one buffer, 21 before it went inline, 11 before its params'
// split fit the reader's kept request, a client declaring no capability
// shared one empty map, and the server's copy went to a pooled buffer.
// Under -race, sync.Pool drops some of what is put back: 2 more at times.
func TestModernToolCallAllocations(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a server")
	}
	client := greeterClient(t, startGreeter(t, ""), "allocs")
	ctx := context.Background()
	params := json.RawMessage(`{"name":"greeter__hello","arguments":{"text":"hello","n":42},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}`)
	call := func() {
		res, err := client.Call(ctx, "tools/call", params)
		if err != nil {
			t.Fatal(err)
		}
		if !json.Valid(res) {
			t.Fatalf("result %s", res)
		}
	}
	for range 100 { // buffers grown, goroutines started
		call()
	}
	allocs := testing.AllocsPerRun(500, call)
	t.Logf("%.1f allocations per modern tools/call (client and gateway)", allocs)
	if allocs > maxModernStdioCallAllocs {
		t.Errorf("a modern tools/call through the gateway takes %.0f allocations (client side included), want at most %d", allocs, maxModernStdioCallAllocs)
	}
}

const maxModernStdioCallAllocs = 9
