package proxy

import (
	"testing"

	"github.com/mcpgate/mcpgate/jsonrpc"
)

// relatedLink is a link whose transport says which request a server's
// request came with, as an HTTP server's answer stream does.
type relatedLink struct {
	link
	rel map[jsonrpc.ID]jsonrpc.ID
}

func (l relatedLink) relatedTo(id jsonrpc.ID) (jsonrpc.ID, bool) {
	r, ok := l.rel[id]
	return r, ok
}

// A server request goes to the client request it names, even when another
// client request to the same server is more recent; without a name, to the
// most recent one.
func TestCausingRequest(t *testing.T) {
	g := &Gateway{}
	a, b := &session{id: "a"}, &session{id: "b"}
	u := &upstream{g: g, wire: &wire{link: relatedLink{rel: map[jsonrpc.ID]jsonrpc.ID{jsonrpc.IntID(900): jsonrpc.IntID(1)}}}}
	sentA, doneA := u.addCaller(clientRequest{a, jsonrpc.StringID("req-a")})
	defer doneA()
	sentA(jsonrpc.IntID(1))
	sentB, doneB := u.addCaller(clientRequest{b, jsonrpc.StringID("req-b")})
	sentB(jsonrpc.IntID(2))

	if got, ok := u.causingRequest(jsonrpc.IntID(900)); !ok || got.s != a || got.id != jsonrpc.StringID("req-a") {
		t.Errorf("request related to upstream call 1 went to %v (%s), want session a", got.s, got.id)
	}
	if got, ok := u.causingRequest(jsonrpc.IntID(901)); !ok || got.s != b {
		t.Errorf("unrelated request went to %v, want the most recent caller, b", got.s)
	}
	doneB()
	if got, _ := u.causingRequest(jsonrpc.IntID(901)); got.s != a {
		t.Errorf("after b finished, unrelated request went to %v, want a", got.s)
	}
}

func TestHTTPLinkRelates(t *testing.T) {
	l := &httpLink{}
	l.relate(jsonrpc.IntID(5), jsonrpc.IntID(42))
	if got, ok := l.relatedTo(jsonrpc.IntID(5)); !ok || got != jsonrpc.IntID(42) {
		t.Fatalf("relatedTo = %v, %v", got, ok)
	}
}
