package proxy

import (
	"context"
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
// client request to the same server is more recent; when the one it names
// has ended, to none (never another session's). Without a name, it goes to
// the one session with requests in flight (its most recent request); with
// requests of two sessions in flight it is ambiguous, never guessed.
func TestCauseOf(t *testing.T) {
	g := &Gateway{}
	a, b := &session{id: "a"}, &session{id: "b"}
	u := &upstream{g: g, wire: &wire{link: relatedLink{rel: map[jsonrpc.ID]jsonrpc.ID{jsonrpc.IntID(900): jsonrpc.IntID(1), jsonrpc.IntID(902): jsonrpc.IntID(99)}}}}
	sentA, doneA := track(u, clientRequest{s: a, id: jsonrpc.StringID("req-a")})
	sentA(jsonrpc.IntID(1))
	sentA2, doneA2 := track(u, clientRequest{s: a, id: jsonrpc.StringID("req-a2")})
	sentA2(jsonrpc.IntID(3))
	if c := u.causeOf(jsonrpc.IntID(901)); !c.ok || c.r.s != a || c.r.id != jsonrpc.StringID("req-a2") {
		t.Errorf("with one session in flight, an unnamed request went to %v (%s), want a's most recent", c.r.s, c.r.id)
	}
	sentB, doneB := track(u, clientRequest{s: b, id: jsonrpc.StringID("req-b")})
	sentB(jsonrpc.IntID(2))

	if c := u.causeOf(jsonrpc.IntID(900)); !c.ok || c.r.s != a || c.r.id != jsonrpc.StringID("req-a") {
		t.Errorf("request related to upstream call 1 went to %v (%s), want session a", c.r.s, c.r.id)
	}
	if c := u.causeOf(jsonrpc.IntID(901)); c.ok || c.sessions != 2 {
		t.Errorf("with two sessions in flight, an unnamed request went to %v (ok %v, sessions %d), want none: ambiguous between 2", c.r.s, c.ok, c.sessions)
	}
	doneA()
	doneA2()
	if c := u.causeOf(jsonrpc.IntID(900)); c.ok || !c.named {
		t.Errorf("request related to upstream call 1, which has ended, went to %v (ok %v); want none", c.r.s, c.ok)
	}
	if c := u.causeOf(jsonrpc.IntID(902)); c.ok || !c.named {
		t.Errorf("request related to a call never seen went to %v (ok %v); want none", c.r.s, c.ok)
	}
	if c := u.causeOf(jsonrpc.IntID(901)); !c.ok || c.r.s != b {
		t.Errorf("after a finished, unrelated request went to %v, want b", c.r.s)
	}
	doneB()
	if c := u.causeOf(jsonrpc.IntID(901)); c.ok || c.sessions != 0 || c.named {
		t.Errorf("with nothing in flight: %+v", c)
	}
}

func TestHTTPLinkRelates(t *testing.T) {
	l := &httpLink{}
	l.relate(jsonrpc.IntID(5), jsonrpc.IntID(42))
	if got, ok := l.relatedTo(jsonrpc.IntID(5)); !ok || got != jsonrpc.IntID(42) {
		t.Fatalf("relatedTo = %v, %v", got, ok)
	}
}

// A server's request finds its cause when it arrives, on the upstream's
// reader: the call it came with may be answered (and its caller gone) by
// the time its handler runs, and then another session's request in flight
// must not stand for it.
func TestCauseFoundOnArrival(t *testing.T) {
	g := &Gateway{}
	a, b := &session{id: "a"}, &session{id: "b"}
	u := &upstream{g: g, wire: &wire{link: relatedLink{rel: map[jsonrpc.ID]jsonrpc.ID{jsonrpc.IntID(900): jsonrpc.IntID(1)}}}}
	sentA, doneA := track(u, clientRequest{s: a, id: jsonrpc.StringID("req-a")})
	sentA(jsonrpc.IntID(1))
	ctx := u.arrived(context.Background(), &jsonrpc.Message{ID: jsonrpc.IntID(900), Method: methodSamplingCreate})
	doneA() // the answer to call 1 came right after the server's request
	sentB, doneB := track(u, clientRequest{s: b, id: jsonrpc.StringID("req-b")})
	defer doneB()
	sentB(jsonrpc.IntID(2))
	if c, _ := ctx.Value(ctxCauseKey{}).(cause); !c.ok || c.r.s != a {
		t.Fatalf("the server's request went to %v, want a: its call was a's when it arrived", c.r.s)
	}
	if ctx := u.arrived(context.Background(), &jsonrpc.Message{ID: jsonrpc.IntID(5), Method: methodToolsList}); ctx.Value(ctxCauseKey{}) != nil {
		t.Fatal("a request that is not to the client side got a cause")
	}
}

// track is addCaller's caller as the pair of its sent and done.
func track(u *upstream, r clientRequest) (sent func(jsonrpc.ID), done func()) {
	c := u.addCaller(r, nil)
	return c.sent, func() { c.done() }
}

// A caller's done takes it, and only it, out of the upstream's callers, in
// whatever order the answers come; a second done changes nothing.
func TestCallerDoneInAnyOrder(t *testing.T) {
	u := &upstream{g: &Gateway{}}
	s := &session{id: "a"}
	var cs []*caller
	for i := range 64 {
		cs = append(cs, u.addCaller(clientRequest{s: s, id: jsonrpc.IntID(int64(i))}, nil))
	}
	left := map[*caller]bool{}
	for _, c := range cs {
		left[c] = true
	}
	for _, i := range []int{5, 0, 63, 62, 17, 5, 30, 1, 40, 0, 2} {
		cs[i].done()
		delete(left, cs[i])
		if len(u.callers) != len(left) {
			t.Fatalf("after done of caller %d: %d callers, want %d", i, len(u.callers), len(left))
		}
		for j, c := range u.callers {
			if !left[c] || c.at != j {
				t.Fatalf("after done of caller %d: callers[%d] is %v (at %d), which is done or misplaced", i, j, c.id, c.at)
			}
		}
	}
}

// done tells whether a server request took the caller as its cause, as
// it stands for good: a caller done is no server request's cause after.
func TestCallerDoneTellsNamed(t *testing.T) {
	u := &upstream{g: &Gateway{}}
	s := &session{id: "a"}
	plain := u.addCaller(clientRequest{s: s, id: jsonrpc.IntID(1)}, nil)
	if plain.done() {
		t.Fatal("done says named: no server request asked")
	}
	cause := u.addCaller(clientRequest{s: s, id: jsonrpc.IntID(2)}, nil)
	if c := u.causeOf(jsonrpc.IntID(900)); !c.ok || c.r.id != jsonrpc.IntID(2) {
		t.Fatalf("causeOf = %+v, want the one caller in flight", c)
	}
	if !cause.done() || !cause.done() {
		t.Fatal("done of the cause of a server request says not named (the second done too)")
	}
	if c := u.causeOf(jsonrpc.IntID(901)); c.ok {
		t.Fatalf("causeOf after done = %+v, want none", c)
	}
}

// BenchmarkCallerDone: the bookkeeping of one call answered while 63
// others are in flight to the same server, the oldest answered first.
func BenchmarkCallerDone(b *testing.B) {
	u := &upstream{g: &Gateway{}}
	r := clientRequest{s: &session{id: "a"}, id: jsonrpc.IntID(1)}
	var inFlight []*caller
	for range 64 {
		inFlight = append(inFlight, u.addCaller(r, nil))
	}
	for b.Loop() {
		inFlight[0].done()
		inFlight = append(inFlight[1:], u.addCaller(r, nil))
	}
}
