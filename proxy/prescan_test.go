package proxy

import (
	"slices"
	"testing"

	"github.com/mcpgate/mcpgate/config"
	"github.com/mcpgate/mcpgate/policy"
)

// Only a line that may be a result decided on at the Result stage is
// prescanned: not a list (its items are decided on one by one), nor a
// server's request or notification, nor an error answer (its prescan would
// be kept, unused, until the next). A name in a string, or deeper than the
// result's members, is neither.
func TestPrescanOnlyWhatMayBeAResult(t *testing.T) {
	for first, want := range map[string]bool{
		`{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"x`:                     true,
		`{"jsonrpc": "2.0", "id": 3, "result": {"content": [{"type": "text", "text": "\"tools\": [`: true,
		`{"jsonrpc":"2.0","id":3,"result":{"structuredContent":{"tools":[1],"method":"GET"`:         true,
		`{"jsonrpc":"2.0","id":3,"result":{"content":[],"structuredContent":{"prompts":[`:           true,
		`{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"a\\"},{"tools":[`:      true,
		`{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"a","inputSchema":{`:                    false,
		`{"jsonrpc": "2.0", "id": 1, "result": {"nextCursor": "2", "tools" : [`:                     false,
		`{"result":{"_meta":{"k":"v"},"resourceTemplates":[`:                                        false,
		`{"jsonrpc":"2.0","method":"notifications/message","params":{"data":"`:                      false,
		`{"jsonrpc":"2.0","id":9,"method":"sampling/createMessage","params":{`:                      false,
		`{"jsonrpc":"2.0","id":5,"error":{"code":-32603,"message":"`:                                false,
	} {
		if got := mayBeResult([]byte(first)); got != want {
			t.Errorf("%s: prescanned %v, want %v", first, got, want)
		}
	}
}

// The slot gives a prescan only to the Run on a result of the line it
// read, once; a result of another line leaves it there.
func TestPrescanSlotGivesItOnce(t *testing.T) {
	chain, err := policy.Compile(config.DefaultPolicies(), policy.Env{})
	if err != nil {
		t.Fatal(err)
	}
	line := []byte(`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"a\nb"}]}}`)
	result := line[len(`{"jsonrpc":"2.0","id":1,"result":`) : len(line)-1]
	ps := chain.Prescan(policy.Result)
	if ps == nil {
		t.Fatal("the default set has no prescan for results")
	}
	ps.Advance(line[:20])
	if !ps.Finish(line) {
		t.Fatal("the prescan failed")
	}
	var slot prescanSlot
	slot.last.Store(ps)
	if slot.take(slices.Clone(result)) != nil {
		t.Fatal("a copy of the result was given the prescan")
	}
	if slot.take(result) != ps || slot.take(result) != nil {
		t.Fatal("the result's Run was not given the prescan, once")
	}
}
