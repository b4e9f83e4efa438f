package proxy

import (
	"context"
	"encoding/json"
	"sync"

	"github.com/mcpgate/mcpgate/internal/rawjson"

	"github.com/mcpgate/mcpgate/jsonrpc"
)

// Resource subscriptions are counted per upstream URI across client
// sessions: the first subscriber's subscribe goes upstream, the last
// unsubscribe (or the last subscriber's disconnect) goes upstream, and an
// update reaches exactly the sessions subscribed, under the URI each used.

type subKey struct {
	up  *upstream
	uri string // the upstream's own URI
}

// subscriber is who watches a resource: a legacy session (its
// resources/subscribe), or one subscriptions/listen request of a modern
// client.
type subscriber struct {
	s      *session
	listen *listener // nil for a session's own subscription
}

// deliver passes an update to the subscriber, under the URI it used.
func (sub subscriber) deliver(ms rawjson.MemberList, params json.RawMessage, uri string) {
	out := ms.Replace(params, "uri", quote(uri))
	if sub.listen == nil {
		sub.s.notify(notifyResourceUpdated, out)
		return
	}
	sub.listen.send(notifyResourceUpdated, out)
}

// offersSubscribe reports whether the connected server takes resource
// subscriptions.
func (u *upstream) offersSubscribe() bool {
	raw, ok := u.capability("resources")
	return ok && subscribable(raw)
}

// subscribable reports whether a resources capability offers subscribe.
func subscribable(resources json.RawMessage) bool {
	var c listCapability
	json.Unmarshal(resources, &c)
	return c.Subscribe
}

func (s *session) subscribe(ctx context.Context, params json.RawMessage, rec *auditRecord) (json.RawMessage, error) {
	rt, uri, params, err := s.routeParam(ctx, params, "uri", kindResources)
	if err != nil {
		return nil, err
	}
	rec.routed(rt, uri)
	if err := s.watch(ctx, subscriber{s: s}, rt, uri, params, rec); err != nil {
		return nil, err
	}
	return json.RawMessage("{}"), nil
}

// watch subscribes sub to the resource rt names: the first subscriber's
// subscription goes upstream, later ones are counted; while it is on its
// way, later ones wait for the server's answer (see subinflight.go).
func (s *session) watch(ctx context.Context, sub subscriber, rt route, uri string, params json.RawMessage, rec *auditRecord) error {
	up, err := s.g.serving(ctx, rt.up)
	if err != nil {
		return err
	}
	if !up.offersSubscribe() {
		return jsonrpc.Errorf(jsonrpc.ErrMethodNotFound, "upstream %q does not support resource subscriptions", rt.up.name)
	}
	key := subKey{up, rt.name}
	g := s.g
	g.mu.Lock()
	if _, already := g.subs[key][sub]; !already && g.subscriptionsOf(sub) >= maxSubscriptions {
		g.mu.Unlock()
		return jsonrpc.Errorf(jsonrpc.ErrInvalidRequest, "this client has %d resource subscriptions, the most mcpgate keeps for one; unsubscribe from some first", maxSubscriptions)
	}
	p := g.subscribing[key]
	if p != nil {
		delete(p.gone, sub) // it asks again: the answer is its own once more
	}
	first := g.addSubscription(key, sub, uri)
	start := p == nil && first
	if start {
		p = g.startSubscribing(key)
	}
	g.mu.Unlock()
	if p == nil {
		return nil // the server has it already
	}
	rec.Params = params // a joiner's record says what it asked, as the first's does
	if start {
		g.goSubscribe(key, p, params)
	}
	return g.awaitSubscribing(ctx, key, sub, p)
}

func (s *session) unsubscribe(ctx context.Context, params json.RawMessage, rec *auditRecord) (json.RawMessage, error) {
	rt, uri, params, err := s.routeParam(ctx, params, "uri", kindResources)
	if err != nil {
		return nil, err
	}
	rec.routed(rt, uri)
	up, ok := s.servingNoStart(rt.up)
	key := subKey{up, rt.name}
	if !ok || !s.g.removeSubscriber(key, subscriber{s: s}) {
		return json.RawMessage("{}"), nil
	}
	defer s.g.settleUnsubscribed(key)
	if up.isModern() {
		up.unwatchModern()
		return json.RawMessage("{}"), nil
	}
	if _, err := s.forward(ctx, rt, methodUnsubscribe, uri, params, rec); err != nil {
		return nil, err
	}
	return json.RawMessage("{}"), nil
}

// removeSubscriber reports whether sub was the last subscriber of key:
// its unsubscribe is then in flight, to be settled (settleUnsubscribed).
func (g *Gateway) removeSubscriber(key subKey, sub subscriber) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	last := g.deleteSubscription(key, sub)
	if last {
		g.startUnsubscribing([]subKey{key})
	}
	return last
}

// dropSubscriptions unsubscribes a session that has gone (and each of its
// listen requests); URIs nobody else watches are unsubscribed upstream.
func (g *Gateway) dropSubscriptions(s *session) {
	g.mu.Lock()
	last := g.deleteSessionSubscribers(s)
	g.startUnsubscribing(last)
	g.mu.Unlock()
	g.unwatchLast(s, last)
}

// dropListenSubscriptions unsubscribes a listen request that has ended.
func (g *Gateway) dropListenSubscriptions(l *listener) {
	g.mu.Lock()
	last := g.deleteSubscriber(subscriber{s: l.s, listen: l})
	g.startUnsubscribing(last)
	g.mu.Unlock()
	g.unwatchLast(nil, last)
}

// unwatchLast unsubscribes upstream the URIs nobody watches any more
// (except from the instance of a server isolated for session s, which
// stops with it), and settles their unsubscribes in flight
// (startUnsubscribing).
func (g *Gateway) unwatchLast(s *session, last []subKey) {
	g.sendUnsubscribes(s, last)
	for _, key := range last {
		g.settleUnsubscribed(key)
	}
}

// sendUnsubscribes is unwatchLast but for settling.
func (g *Gateway) sendUnsubscribes(s *session, last []subKey) {
	if len(last) == 0 {
		return
	}
	// All at once, within one stop_grace: a session with many
	// subscriptions to a server that does not answer must not hold up its
	// end (or mcpgate's) by stop_grace each.
	ctx, cancel := context.WithTimeout(g.ctx, g.live().cfg.StopGrace)
	defer cancel()
	var wg sync.WaitGroup
	relisten := map[*upstream]bool{}
	for _, key := range last {
		if key.up.isModern() {
			relisten[key.up] = true
			continue
		}
		if s != nil && key.up.owner == s {
			continue // the session's own instance stops with it
		}
		if _, err := key.up.connectionNoWait(); err != nil {
			continue // a server that is down forgets subscriptions anyway
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := key.up.call(ctx, methodUnsubscribe, mustJSON(map[string]string{"uri": key.uri})); err != nil && g.ctx.Err() == nil {
				key.up.log.Warn("unsubscribing after a client left failed", "uri", key.uri, "err", err)
			}
		}()
	}
	wg.Wait()
	for u := range relisten {
		u.unwatchModern()
	}
}

// maxSubscriptions bounds one session's resource subscriptions: each costs
// memory for as long as the session lives, and an unsubscribe at its end.
const maxSubscriptions = 1024

func (g *Gateway) dropElicitations(s *session) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.elicitations.dropSession(s)
}

// relayResourceUpdated passes an update to the sessions subscribed to it.
func (g *Gateway) relayResourceUpdated(u *upstream, params json.RawMessage) {
	params = withoutMeta(params, metaSubscriptionID) // our listen's, not the clients'
	ms, err := rawjson.Members(params)
	if err != nil {
		return
	}
	var uri string
	if raw, ok := ms.Get("uri"); !ok || json.Unmarshal(raw, &uri) != nil {
		return
	}
	type target struct {
		sub subscriber
		uri string
	}
	var targets []target
	g.mu.Lock()
	for sub, exposed := range g.subs[subKey{u, uri}] {
		targets = append(targets, target{sub, exposed})
	}
	g.mu.Unlock()
	for _, t := range targets {
		t.sub.deliver(ms, params, t.uri)
	}
}

// resubscribe sends resources/subscribe again for every URI of u that
// clients watch: a server that forgot our session forgot them too. It runs
// before the request that found the session gone is retried, so nothing the
// client does next can miss an update.
func (u *upstream) resubscribe() {
	g := u.g
	g.mu.Lock()
	uris := g.subscribedURIs(u)
	g.mu.Unlock()
	for _, uri := range uris {
		ctx, cancel := context.WithTimeout(g.ctx, u.cfg.Timeout)
		if _, err := u.call(ctx, methodSubscribe, mustJSON(map[string]string{"uri": uri})); err != nil {
			u.log.Warn("subscribing again after a new session failed", "uri", uri, "err", err)
		}
		cancel()
	}
}
