package proxy

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"runtime"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mcpgate/mcpgate/jsonrpc"
)

// givenUpUpstream is an upstream connection with no server, whose calls
// time out after timeout (0: none configured), and gaveUp, which notes a
// call of s given up now.
func givenUpUpstream(timeout time.Duration) (u *upstream, gaveUp func(s *session, upID int64)) {
	u = &upstream{g: &Gateway{}, wire: &wire{givenUp: new(givenUpCalls)}}
	u.cfg.Timeout = timeout
	return u, func(s *session, upID int64) {
		u.wire.givenUp.add(s, jsonrpc.IntID(upID), time.Now(), u.givenUpWindow())
	}
}

// A call its client gave up on keeps its session a candidate for a
// server's unnamed request for the server's timeout: with another
// session's call in flight the request is ambiguous, never that other
// session's. Once the window has passed, or the server has answered the
// given-up call late, the lone call in flight takes it again. A session's
// own given-up call does not make its own call ambiguous.
func TestGivenUpCallKeepsItsSessionACandidate(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a, b := &session{id: "a"}, &session{id: "b"}
		u, gaveUp := givenUpUpstream(30 * time.Second)
		sentA, doneA := track(u, clientRequest{s: a, id: jsonrpc.StringID("req-a")})
		sentA(jsonrpc.IntID(2))
		defer doneA()

		gaveUp(a, 7)
		if c := u.causeOf(jsonrpc.IntID(900)); !c.ok || c.r.s != a {
			t.Errorf("with a's own call given up, a's request in flight got %+v, want a", c)
		}
		gaveUp(b, 1)
		if c := u.causeOf(jsonrpc.IntID(900)); c.ok || c.sessions != 2 {
			t.Errorf("with b's call given up and a's in flight: %+v, want ambiguous between 2", c)
		}
		time.Sleep(29 * time.Second)
		if c := u.causeOf(jsonrpc.IntID(900)); c.ok || c.sessions != 2 {
			t.Errorf("within the server's timeout: %+v, want still ambiguous", c)
		}
		time.Sleep(time.Second)
		if c := u.causeOf(jsonrpc.IntID(900)); !c.ok || c.r.s != a {
			t.Errorf("after the server's timeout: %+v, want a's call in flight", c)
		}
		if n := len(u.wire.givenUp.calls); n != 0 {
			t.Errorf("%d given-up calls still kept after their window", n)
		}

		gaveUp(b, 3)
		u.wire.givenUp.forget(jsonrpc.IntID(3)) // the server answered it late
		if c := u.causeOf(jsonrpc.IntID(900)); !c.ok || c.r.s != a {
			t.Errorf("after the server answered b's given-up call: %+v, want a's call in flight", c)
		}
	})
}

// With nothing in flight, a call given up a moment ago still says whose
// the server's request may be: causeOf names its session, so that the
// one other session there is does not take it.
func TestGivenUpCallWithNothingInFlight(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := &session{id: "b"}
		u, gaveUp := givenUpUpstream(0)
		gaveUp(b, 1)
		if c := u.causeOf(jsonrpc.IntID(900)); c.ok || c.givenUpBy != b || c.sessions != 0 {
			t.Errorf("causeOf = %+v, want given up by b", c)
		}
		time.Sleep(maxGivenUpWindow) // no timeout configured: the cap
		if c := u.causeOf(jsonrpc.IntID(900)); c.givenUpBy != nil {
			t.Errorf("after the window: %+v, want nothing", c)
		}
	})
}

// However many calls are given up, a connection keeps at most maxGivenUp,
// the newest.
func TestGivenUpCallsBounded(t *testing.T) {
	var g givenUpCalls
	now := time.Now()
	s := &session{}
	for i := range 3 * maxGivenUp {
		g.add(s, jsonrpc.IntID(int64(i)), now, time.Minute)
	}
	if len(g.calls) != maxGivenUp || g.calls[0].upID != jsonrpc.IntID(2*maxGivenUp).String() {
		t.Fatalf("kept %d calls from %s, want %d from %d", len(g.calls), g.calls[0].upID, maxGivenUp, 2*maxGivenUp)
	}
}

// A call the server answered (with an error) is not given up, though its
// client cancelled right after, before callFailed ran: the server is done
// with it and cannot ask about it, so remembering it would refuse other
// sessions' server requests for the server's whole timeout.
func TestAnsweredCallIsNotGivenUp(t *testing.T) {
	cr, sw := io.Pipe()
	sr, cw := io.Pipe()
	server := jsonrpc.NewConn(jsonrpc.NewLineStream(sr, sw, sr, 0), jsonrpc.Options{Handler: jsonrpc.HandlerFunc(func(context.Context, *jsonrpc.Message) (json.RawMessage, error) {
		return nil, jsonrpc.Errorf(jsonrpc.ErrInvalidParams, "no such thing")
	})}).Start()
	defer server.Close()
	out := newOutbox(jsonrpc.NewLineStream(cr, cw, cr, 0), upstreamQueueBytes, false, time.Second, nil)
	conn := jsonrpc.NewConn(out, jsonrpc.Options{}).Start()
	defer conn.Close()
	u := &upstream{g: &Gateway{}, name: "shared"}
	w := &wire{conn: conn, out: out, givenUp: new(givenUpCalls)}

	b := &session{id: "b"}
	for _, giveUp := range []string{"cancelled", "deadline"} {
		ctx, cancel := context.WithCancel(context.WithValue(context.Background(), ctxRequestKey{}, &clientRequest{s: b, id: jsonrpc.IntID(1)}))
		call, err := conn.Go(ctx, methodToolsCall, json.RawMessage(`{"name":"x"}`))
		if err != nil {
			t.Fatal(err)
		}
		_, err = call.Wait(context.Background())
		var rpcErr *jsonrpc.Error
		if !errors.As(err, &rpcErr) {
			t.Fatalf("Wait = %v, want the server's error", err)
		}
		// The client's cancellation, or the deadline, after the answer came.
		dl := new(deadline)
		if giveUp == "cancelled" {
			cancel()
		} else {
			dl.fired = true
		}
		u.callFailed(ctx, w, call, dl, methodToolsCall, err)
		cancel()
		if n := len(w.givenUp.calls); n != 0 {
			t.Errorf("%s: the server answered the call, yet %d given-up calls are remembered", giveUp, n)
		}
	}
}

// A given-up call keeps its session a candidate, not its memory: a
// stateless session is made for one request and holds it (its params, up
// to max_message_bytes), so maxGivenUp dropped calls of 1 MiB each held
// 256 MiB for the server's timeout. An ended session still counts: a
// server request may be about its call, so the one other session there
// is must not take it.
func TestGivenUpCallsHoldNoSession(t *testing.T) {
	u := &upstream{g: &Gateway{}, wire: &wire{givenUp: new(givenUpCalls)}}
	const size = 1 << 20
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for i := range maxGivenUp {
		s := &session{id: fmt.Sprint("stateless-", i), stateless: true, checked: &ModernRequest{params: make(json.RawMessage, size)}}
		u.wire.givenUp.add(s, jsonrpc.IntID(int64(i)), time.Now(), time.Minute)
	}
	runtime.GC()
	runtime.GC() // weakly held sessions are gone after a cycle, their memory after the next
	runtime.ReadMemStats(&after)
	if held := int64(after.HeapAlloc) - int64(before.HeapAlloc); held > 32<<20 {
		t.Errorf("%d given-up calls hold %d MiB", maxGivenUp, held>>20)
	}

	if c := u.causeOf(jsonrpc.IntID(900)); c.ok || c.sessions != maxGivenUp {
		t.Errorf("with nothing in flight and %d ended sessions' calls given up: %+v, want ambiguous between them", maxGivenUp, c)
	}
	a := &session{id: "a"}
	_, done := track(u, clientRequest{s: a, id: jsonrpc.StringID("req-a")})
	defer done()
	if c := u.causeOf(jsonrpc.IntID(900)); c.ok || c.sessions != maxGivenUp+1 {
		t.Errorf("with a's call in flight and ended sessions' calls given up: %+v, want ambiguous between %d", c, maxGivenUp+1)
	}

	// One ended session's call alone: the one session alive is not it.
	u = &upstream{g: &Gateway{}, wire: &wire{givenUp: new(givenUpCalls)}}
	u.wire.givenUp.add(&session{id: "b"}, jsonrpc.IntID(1), time.Now(), time.Minute)
	runtime.GC()
	if c := u.causeOf(jsonrpc.IntID(900)); c.ok || c.givenUpBy == nil || c.givenUpBy == a {
		t.Errorf("with an ended session's call given up: %+v, want given up by a session not alive", c)
	}
}
