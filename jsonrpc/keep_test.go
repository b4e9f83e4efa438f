package jsonrpc

import (
	"fmt"
	"testing"

	"github.com/mcpgate/mcpgate/internal/rawjson"
)

// A message the reader keeps has its params' split in memory of its own:
// the reader splits the next message's params into its array again.
func TestKeptMessageOwnsItsParamsSplit(t *testing.T) {
	for _, params := range []string{`{"name":"a","arguments":{}}`, `{"a":1,"b":2,"c":3}`} {
		c := &Conn{params: make(rawjson.MemberList, 0, 8)}
		data := []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":` + params + `}`)
		decoded, err := decode(data, new(Message), nil, c.params, nil)
		if err != nil {
			t.Fatal(err)
		}
		var kept keptRequest
		kept.msg = *decoded
		c.keep(&kept.msg, kept.members[:0])
		want, _ := Decode(data)
		wantSplit, _ := want.ParamMembers()
		if _, err := decode([]byte(`{"jsonrpc":"2.0","id":2,"method":"x","params":{"other":true,"more":[],"still":0}}`), new(Message), nil, c.params, nil); err != nil {
			t.Fatal(err)
		}
		got, ok := kept.msg.ParamMembers()
		if !ok || fmt.Sprint(got) != fmt.Sprint(wantSplit) {
			t.Errorf("params %s: kept split %v after the next message, want %v", params, got, wantSplit)
		}
	}
}

// A kept request's id is its own, whether it fits in the request's bytes
// or not: the line it was read from is overwritten, and the id must not
// change with it.
func TestKeptRequestOwnsItsID(t *testing.T) {
	for _, id := range []string{`7`, `"id-of-16-bytes"`, `"id-of-17-bytes!"`, `"a long id: 0123456789abcdef0123456789"`} {
		line := []byte(`{"jsonrpc":"2.0","id":` + id + `,"method":"ping"}`)
		msg, err := Decode(line)
		if err != nil {
			t.Fatal(err)
		}
		var kept keptRequest
		got := kept.ownID(msg.ID)
		clear(line)
		if got.String() != id {
			t.Errorf("id %s: kept as %s once its line is overwritten", id, got)
		}
	}
}
