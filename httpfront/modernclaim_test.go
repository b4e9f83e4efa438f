package httpfront

import (
	"testing"

	"github.com/mcpgate/mcpgate/jsonrpc"
)

// A modern request whose envelope key is written with an escape (PHP's
// json_encode writes "io.modelcontextprotocol\/protocolVersion") claims
// the modern era as one written plainly does; the gateway reads it so
// (proxy.mayHoldEnvelope), but the front's quick search misses it, and
// such a client gets 400 (no session id, or "no _meta envelope").
func TestModernClaimEscapedKey(t *testing.T) {
	for _, body := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol\/protocolVersion":"2026-07-28","io.modelcontextprotocol\/clientCapabilities":{}}}}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"\u005fmeta":{"\u0069o.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`,
	} {
		msg, err := jsonrpc.Decode([]byte(body))
		if err != nil {
			t.Fatal(err)
		}
		if v := modernClaim(msg); string(v) != `"2026-07-28"` {
			t.Errorf("modernClaim(%s) = %s, want the version", body, v)
		}
		if !batchHasModern([]byte("[" + body + "]")) {
			t.Errorf("batchHasModern([%s]) = false", body)
		}
	}
}
