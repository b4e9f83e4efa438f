package proxy

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"testing"

	"github.com/mcpgate/mcpgate/config"
)

// A modern client's request that ends as the server asks for input (both
// there when the exchange looks) ends the exchange: the server's request
// gets an error, and no call is held for a client that is gone, and that
// never got a requestState to come back with.
func TestExchangeOfAnEndedRequestIsNotParked(t *testing.T) {
	s := idleExchangeSession(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	// Each run's select picks either; 64 runs all right leave the old
	// order a chance of 2^-64.
	for range 64 {
		x := idleExchange(s.g)
		a := &ask{key: "mcpgate-1", method: "sampling/createMessage", answer: make(chan callResult, 1)}
		x.asks <- a
		res, err := s.awaitExchange(ctx, x)
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("the exchange of an ended request answered %s, %v; want context.Canceled", res, err)
		}
		select { // what ask waits on
		case r := <-a.answer:
			if r.err == nil {
				t.Fatalf("the server's request was answered %s; want an error", r.res)
			}
		case <-x.done:
		default:
			t.Fatal("the server's request got no answer: it waits on an exchange nobody will come back to")
		}
		s.g.mu.Lock()
		parked := len(s.g.parked)
		s.g.mu.Unlock()
		if parked != 0 {
			t.Fatalf("%d exchanges parked for a client that is gone", parked)
		}
	}
}

// A modern client's request cancelled after the exchange first looked at
// it, but before the exchange is parked, ends the exchange at once: the
// client never gets the requestState, and the call was held until its TTL
// (parkTTL), counted against the client's share of maxParked.
func TestExchangeCancelledBeforeParkEnds(t *testing.T) {
	s := idleExchangeSession(t)
	x := idleExchange(s.g)
	a := &ask{key: "mcpgate-1", method: "sampling/createMessage", answer: make(chan callResult, 1)}
	x.asks <- a
	ctx := &cancelledOnceLooked{}
	ctx.Context, ctx.cancel = context.WithCancel(context.Background())
	res, err := s.awaitExchange(ctx, x)
	if !errors.Is(err, context.Canceled) {
		t.Errorf("the exchange of a request cancelled before it was parked answered %s, %v; want context.Canceled", res, err)
	}
	s.g.mu.Lock()
	parked := len(s.g.parked)
	s.g.mu.Unlock()
	if parked != 0 {
		t.Errorf("%d exchanges parked for a request cancelled before it was answered", parked)
	}
	select {
	case r := <-a.answer:
		if r.err == nil {
			t.Errorf("the server's request was answered %s; want an error", r.res)
		}
	default:
		t.Error("the server's request got no answer: it waits on an exchange nobody will come back to")
	}
}

// cancelledOnceLooked is a context cancelled just after its first look
// (Err): a cancel that comes between the exchange's look and its park.
type cancelledOnceLooked struct {
	context.Context
	cancel context.CancelFunc
	looked bool
}

func (c *cancelledOnceLooked) Err() error {
	if !c.looked {
		c.looked = true
		err := c.Context.Err()
		c.cancel()
		return err
	}
	return c.Context.Err()
}

// A server's answer to an exchange's call that is there when the client's
// request ends (cancelled, or its session deleted) is the request's
// outcome, not the cancellation: the audit trail records what the server
// did. The wait picked either at random.
func TestExchangeAnsweredAsItIsCancelled(t *testing.T) {
	s := idleExchangeSession(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	// 64 runs all right leave the random pick a chance of 2^-64.
	for range 64 {
		x := idleExchange(s.g)
		x.result <- callResult{res: json.RawMessage(`{"content":[]}`)}
		if res, err := s.awaitExchange(ctx, x); err != nil || string(res) != `{"content":[]}` {
			t.Fatalf("an exchange whose server had answered, its request cancelled: %s, %v; want the server's answer", res, err)
		}
	}
}

// idleExchangeSession is client "c"'s session on a gateway whose one
// server is never started: the exchange tests drive awaitExchange alone.
func idleExchangeSession(t *testing.T) *session {
	t.Helper()
	cfg := &config.Config{Servers: []config.Server{{Name: "idle", Type: config.TypeStdio, Command: "unused"}}}
	g, err := New(cfg, Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Close() })
	return &session{g: g, client: "c"}
}

// idleExchange is an exchange of client "c"'s tools/call to the idle
// server, held by "c", with nothing in it yet.
func idleExchange(g *Gateway) *exchange {
	_, callCancel := context.WithCancel(context.Background())
	return &exchange{g: g, id: newSessionID(), up: &upstream{name: "idle"}, method: methodToolsCall, name: "idle__ask", client: "c", holder: "c", cancel: callCancel,
		result: make(chan callResult, 1), asks: make(chan *ask, maxPendingAsks), done: make(chan struct{}), pending: map[string]*ask{}}
}
