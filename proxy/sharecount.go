package proxy

// The per-client shares of maxParked and maxListeners are checked on every
// park and every listen, under g.mu. Counting a client's entries by walking
// all of them (up to 1,024 each) made every such check cost every client's
// holdings with the gateway's lock held. So g.parked and g.listeners change
// only through these, which keep each holder's count beside them (as
// subcount.go does for subscriptions).

// holderCounts counts entries by the client they count against
// (session.holder). A holder with none has no entry.
type holderCounts map[string]int

func (c *holderCounts) add(holder string) {
	if *c == nil {
		*c = holderCounts{}
	}
	(*c)[holder]++
}

func (c holderCounts) remove(holder string) {
	if c[holder]--; c[holder] <= 0 {
		delete(c, holder)
	}
}

// parkExchange holds x until its client comes back. g.mu held.
func (g *Gateway) parkExchange(x *exchange) {
	if g.parked[x.id] == x {
		return
	}
	g.parked[x.id] = x
	g.parkedOf.add(x.holder)
}

// unparkExchange lets go of x, if it is held, and reports whether it was.
// g.mu held.
func (g *Gateway) unparkExchange(x *exchange) bool {
	if g.parked[x.id] != x {
		return false
	}
	delete(g.parked, x.id)
	g.parkedOf.remove(x.holder)
	return true
}

// addListener counts l open. g.mu held.
func (g *Gateway) addListener(l *listener) {
	if _, ok := g.listeners[l]; ok {
		return
	}
	g.listeners[l] = struct{}{}
	g.listensOf.add(l.holder)
	g.listenersBy.add(l)
}

// removeListener counts l closed, if it was open. g.mu held.
func (g *Gateway) removeListener(l *listener) {
	if _, ok := g.listeners[l]; !ok {
		return
	}
	delete(g.listeners, l)
	g.listensOf.remove(l.holder)
	g.listenersBy.remove(l)
}
