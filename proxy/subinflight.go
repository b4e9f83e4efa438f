package proxy

import (
	"context"
	"encoding/json"

	"github.com/mcpgate/mcpgate/jsonrpc"
)

// A URI's first subscriber sends resources/subscribe upstream; until the
// server answers, the subscription is in flight. Who subscribes to the URI
// meanwhile is counted at once (the limit and a session's end see it), and
// waits for that answer: a refusal reaches each of them and leaves none
// counted. The subscribe runs on, whoever of them leaves or is cancelled:
// only the answer says whether the server subscribed, so one that arrives
// when nobody is left is followed by resources/unsubscribe; until then,
// leaving does not unsubscribe (deleteSubscription), or the unsubscribe
// could overtake the subscribe, the server left subscribed. A subscriber
// whose request is cancelled meanwhile stays counted until the answer
// comes (p.gone): the subscribe it started is still the server's to
// answer, and "subscribe to a new URI, then cancel", over and over, must
// meet the session's limit rather than grow what is in flight. The last
// subscriber's unsubscribe is in flight the same way: who subscribes
// meanwhile waits for it, and is subscribed again after it (a server may
// answer its requests in any order: a subscribe sent beside the
// unsubscribe could be undone by it).

// subscribing is a resources/subscribe on its way to a server.
type subscribing struct {
	done chan struct{} // closed once settled
	err  error         // the server's refusal, if any, set before done is closed
	// movedTo, set under g.mu, is where a reload moved the subscribers
	// (moveSubscriptionKey): the successor subscribes them again, so what
	// becomes of this subscribe to the server replaced is not their answer.
	movedTo *subKey
	// gone, under g.mu, are the subscribers whose request was cancelled
	// before the answer: counted until it comes, then removed.
	gone map[subscriber]struct{}
}

// dropGone removes p's cancelled subscribers from key, p still in flight
// (so none of them is key's last: the answer decides). g.mu held.
func (g *Gateway) dropGone(key subKey, p *subscribing) {
	for sub := range p.gone {
		g.deleteSubscription(key, sub)
	}
	p.gone = nil
}

// startSubscribing records that key's subscribe is in flight. g.mu held.
func (g *Gateway) startSubscribing(key subKey) *subscribing {
	if g.subscribing == nil {
		g.subscribing = map[subKey]*subscribing{}
	}
	p := &subscribing{done: make(chan struct{})}
	g.subscribing[key] = p
	return p
}

// settleSubscribing ends key's subscribe in flight with its outcome: on a
// refusal, nobody stays subscribed, since everyone counted waited for it.
func (g *Gateway) settleSubscribing(key subKey, p *subscribing, err error) {
	g.mu.Lock()
	if p.movedTo != nil {
		err = nil
	}
	if err != nil {
		g.deleteSubscriptionKey(key)
	}
	g.endSubscribing(key, p, err)
}

// settleAccepted ends key's accepted subscribe in flight, if whether
// anyone watches key is as watched says. Checked and ended under one hold
// of g.mu: a subscriber joining between the two would be told it is
// subscribed when the server was just unsubscribed.
func (g *Gateway) settleAccepted(key subKey, p *subscribing, watched bool) bool {
	g.mu.Lock()
	g.dropGone(key, p)
	if (len(g.subs[key]) > 0) != watched {
		g.mu.Unlock()
		return false
	}
	g.endSubscribing(key, p, nil)
	return true
}

// endSubscribing settles p. g.mu held, and released.
func (g *Gateway) endSubscribing(key subKey, p *subscribing, err error) {
	g.dropGone(key, p)
	delete(g.subscribing, key)
	p.err = err
	g.mu.Unlock()
	close(p.done)
}

// startUnsubscribing records that each of keys, left with no subscriber,
// is on its way to be unsubscribed; whoever unsubscribes it settles it
// (settleUnsubscribed). g.mu held.
func (g *Gateway) startUnsubscribing(keys []subKey) {
	for _, key := range keys {
		g.startSubscribing(key)
	}
}

// settleUnsubscribed ends key's unsubscribe in flight: who subscribed to
// key meanwhile waited for it, and is subscribed now.
func (g *Gateway) settleUnsubscribed(key subKey) {
	g.mu.Lock()
	p := g.subscribing[key]
	if p == nil {
		g.mu.Unlock()
		return
	}
	g.dropGone(key, p)
	if len(g.subs[key]) == 0 {
		g.endSubscribing(key, p, nil)
		return
	}
	g.mu.Unlock()
	g.goSubscribe(key, p, mustJSON(map[string]string{"uri": key.uri}))
}

// goSubscribe runs key's subscribe in flight in the background, unless
// mcpgate is shutting down.
func (g *Gateway) goSubscribe(key subKey, p *subscribing, params json.RawMessage) {
	if !g.addBackground() {
		g.settleSubscribing(key, p, jsonrpc.Errorf(errUnavailable, "upstream %q is stopped (mcpgate is shutting down)", key.up.name))
		return
	}
	go func() {
		defer g.background.Done()
		g.subscribeUpstream(key, p, params)
	}()
}

// subscribeUpstream sends key's subscribe and settles it. Its context is
// the gateway's, not the first subscriber's: the server answers whoever
// waits. Bounded by the server's timeout, a wait for its connection
// included, as the subscribe again after a new session is: no progress
// comes for a subscribe, and its cancelled subscribers stay counted until
// it ends.
func (g *Gateway) subscribeUpstream(key subKey, p *subscribing, params json.RawMessage) {
	// The client's progress token means nothing to the server here: the
	// subscribe is no longer that request's.
	params = withoutMeta(params, "progressToken")
	for {
		ctx, cancel := context.WithTimeout(g.ctx, key.up.cfg.Timeout)
		err := key.up.subscribeNow(ctx, key.uri, params)
		cancel()
		if err != nil {
			g.settleSubscribing(key, p, err)
			return
		}
		if g.settleAccepted(key, p, true) {
			return
		}
		// Everyone left before the answer. Still in flight meanwhile:
		// who comes now waits for the unsubscribe, then for a subscribe
		// again, in that order on the wire.
		g.sendUnsubscribes(nil, []subKey{key})
		if g.settleAccepted(key, p, false) {
			return
		}
	}
}

// subscribeNow subscribes the server to uri.
func (u *upstream) subscribeNow(ctx context.Context, uri string, params json.RawMessage) error {
	if u.isModern() {
		return u.watchModern(ctx, uri)
	}
	_, err := u.call(ctx, methodSubscribe, params)
	return err
}

// awaitSubscribing waits for key's subscribe in flight, which sub joined.
// A subscriber whose request ends first stays counted until the subscribe
// settles (p.gone). Once it settled, or moved to a server that replaced
// key's, it is no longer counted at once; if it was the last one, the
// server is unsubscribed, as an unsubscribe would.
func (g *Gateway) awaitSubscribing(ctx context.Context, key subKey, sub subscriber, p *subscribing) error {
	select {
	case <-p.done:
		return p.err
	case <-ctx.Done():
	}
	g.mu.Lock()
	if p.movedTo == nil && g.subscribing[key] == p {
		if _, counted := g.subs[key][sub]; counted {
			if p.gone == nil {
				p.gone = map[subscriber]struct{}{}
			}
			p.gone[sub] = struct{}{}
		}
		g.mu.Unlock()
		return ctx.Err()
	}
	if p.movedTo != nil {
		key = *p.movedTo
	}
	last := g.deleteSubscription(key, sub)
	if last {
		g.startUnsubscribing([]subKey{key})
	}
	g.mu.Unlock()
	if last {
		g.unwatchLast(nil, []subKey{key})
	}
	return ctx.Err()
}

// followMoves points each subscribe in flight whose subscribers an earlier
// reload moved to a server this reload replaces (successor) at the
// successor: a cancelled waiter leaves the key its subscription is at
// now, not a stale one. g.mu held.
func (g *Gateway) followMoves(successor map[*upstream]*upstream) {
	for _, p := range g.subscribing {
		if p.movedTo == nil {
			continue
		}
		if nu, ok := successor[p.movedTo.up]; ok {
			p.movedTo = &subKey{up: nu, uri: p.movedTo.uri}
		}
	}
}
