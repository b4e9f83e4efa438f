package httpfront

import (
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mcpgate/mcpgate/internal/mcpheader"
	"github.com/mcpgate/mcpgate/jsonrpc"
)

// A modern request's headers are checked against its body without a copy
// of what they hold alike: MCP-Protocol-Version is read by its canonical
// key (Header.Values made that key on every request, an allocation), and
// the body's version is compared as it is written, not unquoted first.
// What is left is the body's name, unquoted for the lookup of its tool: 1
// allocation (3 before).
func TestCheckHeadersAllocations(t *testing.T) {
	f := &Front{}
	body := `{"jsonrpc":"2.0","id":1,"method":"prompts/get","params":{"name":"fake__greet","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`
	msg, err := jsonrpc.DecodeBody([]byte(body))
	if err != nil {
		t.Fatal(err)
	}
	claim := modernClaim(msg)
	if claim == nil {
		t.Fatal("no modern claim read from the body")
	}
	r := httptest.NewRequest("POST", "/mcp", strings.NewReader(body))
	r.Header.Set(mcpheader.ProtocolVersion, "2026-07-28")
	r.Header.Set(mcpheader.Method, "prompts/get")
	r.Header.Set(mcpheader.Name, "fake__greet")
	if err := f.checkHeaders(r, msg, claim); err != nil {
		t.Fatalf("the headers were refused: %v", err)
	}
	allocs := testing.AllocsPerRun(200, func() { f.checkHeaders(r, msg, claim) })
	if allocs > 1 {
		t.Errorf("checking a modern request's headers takes %.0f allocations, want at most 1", allocs)
	}
}
