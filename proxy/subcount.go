package proxy

// Every subscribe checks its subscriber against maxSubscriptions, and every
// session's end (and listen's) takes its subscriptions away. Walking g.subs
// under g.mu for either made each cost every subscription of every client:
// one client with 256 listens of 1,024 URIs each holds ~262k of them, and
// every subscribe, and every session's end, by anyone then scanned them all
// with the gateway's lock held. So g.subs changes only through these, which
// keep each session's subscribers, and each subscriber's keys, beside it
// (and each server's URIs: an isolated instance's reaper asks whether it
// has subscribers, which walked them all too, for each idle instance).

// subscriptionIndex holds, by session, its subscribers (its own, and each
// of its listens') and the keys each is subscribed to. A subscriber with no
// subscription has no entry, nor a session with none.
type subscriptionIndex map[*session]map[subscriber]map[subKey]struct{}

func (ix *subscriptionIndex) add(key subKey, sub subscriber) {
	if *ix == nil {
		*ix = subscriptionIndex{}
	}
	subs := (*ix)[sub.s]
	if subs == nil {
		subs = map[subscriber]map[subKey]struct{}{}
		(*ix)[sub.s] = subs
	}
	keys := subs[sub]
	if keys == nil {
		keys = map[subKey]struct{}{}
		subs[sub] = keys
	}
	keys[key] = struct{}{}
}

func (ix subscriptionIndex) remove(key subKey, sub subscriber) {
	subs := ix[sub.s]
	keys := subs[sub]
	delete(keys, key)
	if len(keys) > 0 {
		return
	}
	delete(subs, sub)
	if len(subs) == 0 {
		delete(ix, sub.s)
	}
}

// addURI and removeURI keep g.subsByUp, the URIs of each upstream that
// have subscribers: whether an idle instance is busy, and what a server is
// to be subscribed to again, are asked of one server, and must not walk
// every server's. g.mu held.
func (g *Gateway) addURI(key subKey) {
	if g.subsByUp == nil {
		g.subsByUp = map[*upstream]map[string]struct{}{}
	}
	uris := g.subsByUp[key.up]
	if uris == nil {
		uris = map[string]struct{}{}
		g.subsByUp[key.up] = uris
	}
	uris[key.uri] = struct{}{}
}

func (g *Gateway) removeURI(key subKey) {
	uris := g.subsByUp[key.up]
	delete(uris, key.uri)
	if len(uris) == 0 {
		delete(g.subsByUp, key.up)
	}
}

// subscribedURIs returns the URIs of u that have subscribers. g.mu held.
func (g *Gateway) subscribedURIs(u *upstream) []string {
	uris := make([]string, 0, len(g.subsByUp[u]))
	for uri := range g.subsByUp[u] {
		uris = append(uris, uri)
	}
	return uris
}

// subscriptionsOf counts sub's subscriptions. g.mu held.
func (g *Gateway) subscriptionsOf(sub subscriber) int { return len(g.subsOf[sub.s][sub]) }

// addSubscription records that sub watches key, under uri, and reports
// whether it is key's first subscriber. g.mu held.
func (g *Gateway) addSubscription(key subKey, sub subscriber, uri string) (first bool) {
	subs := g.subs[key]
	first = len(subs) == 0
	if first {
		subs = map[subscriber]string{}
		g.subs[key] = subs
		g.addURI(key)
	}
	if _, already := subs[sub]; !already {
		g.subsOf.add(key, sub)
	}
	subs[sub] = uri
	return first
}

// deleteSubscription removes sub from key's subscribers, and reports
// whether it was there and key has none left (key is then gone), and is to
// be unsubscribed upstream. g.mu held.
func (g *Gateway) deleteSubscription(key subKey, sub subscriber) (last bool) {
	subs, ok := g.subs[key]
	if !ok {
		return false
	}
	if _, ok := subs[sub]; !ok {
		return false
	}
	delete(subs, sub)
	g.subsOf.remove(key, sub)
	if len(subs) > 0 {
		return false
	}
	delete(g.subs, key)
	g.removeURI(key)
	// A subscribe in flight unsubscribes once its answer came.
	_, inFlight := g.subscribing[key]
	return !inFlight
}

// deleteSubscriptionKey removes key and all its subscribers. g.mu held.
func (g *Gateway) deleteSubscriptionKey(key subKey) {
	subs, ok := g.subs[key]
	if !ok {
		return
	}
	for sub := range subs {
		g.subsOf.remove(key, sub)
	}
	delete(g.subs, key)
	g.removeURI(key)
}

// deleteSubscriber removes all of sub's subscriptions, and returns the keys
// left with no subscriber (now gone). g.mu held.
func (g *Gateway) deleteSubscriber(sub subscriber) (last []subKey) {
	for key := range g.subsOf[sub.s][sub] {
		if g.deleteSubscription(key, sub) {
			last = append(last, key)
		}
	}
	return last
}

// deleteSessionSubscribers removes the subscriptions of s and of each of
// its listens, and returns the keys left with no subscriber (now gone).
// g.mu held.
func (g *Gateway) deleteSessionSubscribers(s *session) (last []subKey) {
	for sub := range g.subsOf[s] {
		last = append(last, g.deleteSubscriber(sub)...)
	}
	return last
}

// moveSubscriptionKey hands from's subscribers to to, but for those whose
// request was cancelled while from's subscribe was in flight: they leave
// with the server replaced. g.mu held.
func (g *Gateway) moveSubscriptionKey(from, to subKey) {
	subs := g.subs[from]
	var gone map[subscriber]struct{}
	if p := g.subscribing[from]; p != nil {
		p.movedTo = &to
		gone, p.gone = p.gone, nil
	}
	g.deleteSubscriptionKey(from)
	for sub, uri := range subs {
		if _, ok := gone[sub]; !ok {
			g.addSubscription(to, sub, uri)
		}
	}
}
