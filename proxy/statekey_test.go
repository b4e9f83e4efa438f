package proxy

import (
	"encoding/json"
	"testing"
)

// A retry's requestState is found however its key is written: a key with
// an escape ("requ\u0065stState") was missed, and the retry started the
// call again on the server (a second run of the tool) instead of
// continuing the one waiting for this input.
func TestStateOfEscapedKey(t *testing.T) {
	for _, params := range []string{
		`{"name":"t","requestState":"mcpgate1.s"}`,
		`{"name":"t","requ\u0065stState":"mcpgate1.s"}`,
		`{"name":"t","\u0072equestState":"mcpgate1.s"}`,
	} {
		if state, ok := stateOf(json.RawMessage(params)); !ok || state != "mcpgate1.s" {
			t.Errorf("stateOf(%s) = %q, %v; want the state", params, state, ok)
		}
	}
	if _, ok := stateOf(json.RawMessage(`{"name":"requestState"}`)); ok {
		t.Error("a value that reads requestState is no state")
	}
}
