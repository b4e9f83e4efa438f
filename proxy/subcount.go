package proxy

// Every subscribe checks its subscriber against maxSubscriptions. Counting
// by walking g.subs under g.mu made each subscribe cost every subscription
// of every client: one client with 256 listens of 1,024 URIs each holds
// ~262k of them, and every subscribe by anyone then scanned them all with
// the gateway's lock held. So g.subs changes only through these, which
// keep each subscriber's count with it.

// subscriptionsOf counts sub's subscriptions. g.mu held.
func (g *Gateway) subscriptionsOf(sub subscriber) int { return g.subCounts[sub] }

// addSubscription records that sub watches key, under uri, and reports
// whether it is key's first subscriber. g.mu held.
func (g *Gateway) addSubscription(key subKey, sub subscriber, uri string) (first bool) {
	subs := g.subs[key]
	first = len(subs) == 0
	if first {
		subs = map[subscriber]string{}
		g.subs[key] = subs
	}
	if _, already := subs[sub]; !already {
		if g.subCounts == nil {
			g.subCounts = map[subscriber]int{}
		}
		g.subCounts[sub]++
	}
	subs[sub] = uri
	return first
}

// deleteSubscription removes sub from key's subscribers, and reports
// whether it was there and key has none left (key is then gone). g.mu held.
func (g *Gateway) deleteSubscription(key subKey, sub subscriber) (last bool) {
	subs, ok := g.subs[key]
	if !ok {
		return false
	}
	if _, ok := subs[sub]; !ok {
		return false
	}
	delete(subs, sub)
	g.uncount(sub)
	if len(subs) > 0 {
		return false
	}
	delete(g.subs, key)
	return true
}

// deleteSubscriptionKey removes key and all its subscribers. g.mu held.
func (g *Gateway) deleteSubscriptionKey(key subKey) {
	for sub := range g.subs[key] {
		g.uncount(sub)
	}
	delete(g.subs, key)
}

// deleteSubscribersWhere removes the subscribers gone says are gone, and
// returns the keys left with none (now gone). g.mu held.
func (g *Gateway) deleteSubscribersWhere(gone func(subscriber) bool) (last []subKey) {
	for key, subs := range g.subs {
		for sub := range subs {
			if gone(sub) {
				delete(subs, sub)
				g.uncount(sub)
			}
		}
		if len(subs) == 0 {
			delete(g.subs, key)
			last = append(last, key)
		}
	}
	return last
}

// moveSubscriptionKey hands from's subscribers to to. g.mu held.
func (g *Gateway) moveSubscriptionKey(from, to subKey) {
	subs := g.subs[from]
	g.deleteSubscriptionKey(from)
	for sub, uri := range subs {
		g.addSubscription(to, sub, uri)
	}
}

// uncount takes one subscription off sub's count. g.mu held.
func (g *Gateway) uncount(sub subscriber) {
	if g.subCounts[sub]--; g.subCounts[sub] <= 0 {
		delete(g.subCounts, sub)
	}
}
