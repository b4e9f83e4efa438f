package proxy

import (
	"runtime"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mcpgate/mcpgate/jsonrpc"
)

// A client that gives up more than maxGivenUp calls of its own does not
// push another session's given-up call out of the memory: b cancels a call
// the server goes on with, then a abandons maxGivenUp calls and makes one
// more. Were b's call forgotten, a's lone call in flight would take the
// server's question about b's call (b's private question, to a). Past the
// window it is forgotten as usual, and a's own flood never makes a's own
// calls ambiguous.
func TestGivenUpFloodKeepsOtherSessions(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a, b := &session{id: "a"}, &session{id: "b"}
		u, gaveUp := givenUpUpstream(30 * time.Second)
		gaveUp(b, 1)
		time.Sleep(time.Second)
		for i := range 3 * maxGivenUp {
			gaveUp(a, int64(100+i))
		}
		if n := len(u.wire.givenUp.calls); n > maxGivenUp {
			t.Errorf("%d given-up calls kept, want at most %d", n, maxGivenUp)
		}
		sentA, doneA := track(u, clientRequest{s: a, id: jsonrpc.StringID("req-a")})
		sentA(jsonrpc.IntID(2))
		defer doneA()
		if c := u.causeOf(jsonrpc.IntID(900)); c.ok || c.sessions < 2 {
			t.Errorf("after a gave up %d calls, with b's given up and a's in flight: %+v, want ambiguous", 3*maxGivenUp, c)
		}
		time.Sleep(u.givenUpWindow() - time.Second)
		if c := u.causeOf(jsonrpc.IntID(900)); !c.ok || c.r.s != a {
			t.Errorf("once b's call's window passed: %+v, want a's call in flight (a's own given up calls are a's)", c)
		}
	})
}

// When maxGivenUp other sessions each gave a call up after the victim, the
// victim's is pushed out; until its window ends a server request may still
// be about it, so a lone call in flight does not take one meanwhile, though
// every other given-up call was answered late and forgotten.
func TestGivenUpFloodOfSessions(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		u, gaveUp := givenUpUpstream(30 * time.Second)
		victim := &session{id: "victim"}
		gaveUp(victim, 1)
		time.Sleep(time.Second)
		flood := make([]*session, maxGivenUp)
		for i := range flood {
			flood[i] = &session{id: "flood"}
			u.wire.givenUp.add(flood[i], jsonrpc.IntID(int64(100+i)), time.Now(), u.givenUpWindow())
		}
		for i := range flood {
			u.wire.givenUp.forget(jsonrpc.IntID(int64(100 + i)))
		}
		a := &session{id: "a"}
		sentA, doneA := track(u, clientRequest{s: a, id: jsonrpc.StringID("req-a")})
		sentA(jsonrpc.IntID(2))
		defer doneA()
		if c := u.causeOf(jsonrpc.IntID(900)); c.ok || c.sessions < 2 {
			t.Errorf("with the victim's given-up call pushed out by %d sessions' calls: %+v, want ambiguous", maxGivenUp, c)
		}
		time.Sleep(u.givenUpWindow() - time.Second)
		if c := u.causeOf(jsonrpc.IntID(900)); !c.ok || c.r.s != a {
			t.Errorf("once the victim's call's window passed: %+v, want a's call in flight", c)
		}
		runtime.KeepAlive(flood)
		runtime.KeepAlive(victim)
	})
}
