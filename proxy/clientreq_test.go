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
// client request to the same server is more recent. Without a name, it goes
// to the one session with requests in flight (its most recent request);
// with requests of two sessions in flight it is ambiguous, never guessed.
func TestCausingRequest(t *testing.T) {
	g := &Gateway{}
	a, b := &session{id: "a"}, &session{id: "b"}
	u := &upstream{g: g, wire: &wire{link: relatedLink{rel: map[jsonrpc.ID]jsonrpc.ID{jsonrpc.IntID(900): jsonrpc.IntID(1)}}}}
	sentA, doneA := u.addCaller(clientRequest{a, jsonrpc.StringID("req-a")})
	sentA(jsonrpc.IntID(1))
	sentA2, doneA2 := u.addCaller(clientRequest{a, jsonrpc.StringID("req-a2")})
	sentA2(jsonrpc.IntID(3))
	if got, ok, _ := u.causingRequest(jsonrpc.IntID(901)); !ok || got.s != a || got.id != jsonrpc.StringID("req-a2") {
		t.Errorf("with one session in flight, an unnamed request went to %v (%s), want a's most recent", got.s, got.id)
	}
	sentB, doneB := u.addCaller(clientRequest{b, jsonrpc.StringID("req-b")})
	sentB(jsonrpc.IntID(2))

	if got, ok, _ := u.causingRequest(jsonrpc.IntID(900)); !ok || got.s != a || got.id != jsonrpc.StringID("req-a") {
		t.Errorf("request related to upstream call 1 went to %v (%s), want session a", got.s, got.id)
	}
	if got, ok, n := u.causingRequest(jsonrpc.IntID(901)); ok || n != 2 {
		t.Errorf("with two sessions in flight, an unnamed request went to %v (ok %v, sessions %d), want none: ambiguous between 2", got.s, ok, n)
	}
	doneA()
	doneA2()
	if got, ok, _ := u.causingRequest(jsonrpc.IntID(901)); !ok || got.s != b {
		t.Errorf("after a finished, unrelated request went to %v, want b", got.s)
	}
	doneB()
	if _, ok, n := u.causingRequest(jsonrpc.IntID(901)); ok || n != 0 {
		t.Errorf("with nothing in flight: ok %v, sessions %d", ok, n)
	}
}

func TestHTTPLinkRelates(t *testing.T) {
	l := &httpLink{}
	l.relate(jsonrpc.IntID(5), jsonrpc.IntID(42))
	if got, ok := l.relatedTo(jsonrpc.IntID(5)); !ok || got != jsonrpc.IntID(42) {
		t.Fatalf("relatedTo = %v, %v", got, ok)
	}
}
