package proxy

import (
	"bytes"
	"time"
)

// changeDebounce gathers a burst of list_changed notifications into one
// refresh: servers often send several in a row (the reference server sends
// a few right after initialize).
const changeDebounce = 10 * time.Millisecond

// listChanged handles an upstream's notifications/<kind>/list_changed: the
// cached list is dropped at once, and a refresh is scheduled (see
// coalescer: while a refresh runs, any number of notifications cause
// exactly one more after it).
func (u *upstream) listChanged(k kind) {
	u.mu.Lock()
	for _, kk := range sameNotification(k) {
		u.lists[kk].fresh = false
		u.lists[kk].gen++
	}
	u.mu.Unlock()
	u.g.discovery.forget(u, sameNotification(k)...)
	u.changes[k].notify()
}

// sameNotification lists the lists one notification covers: resources and
// resource templates change together.
func sameNotification(k kind) []kind {
	if k == kindResources {
		return []kind{kindResources, kindTemplates}
	}
	return []kind{k}
}

// refreshLists fetches the lists again, if the gateway holds them, and tells
// every client when what a client would see has changed. A list nobody has
// fetched is not fetched now (discovery is the clients' to ask for): clients
// are simply told it changed.
func (u *upstream) refreshLists(k kind) {
	if u.g.ctx.Err() != nil {
		return // mcpgate is stopping
	}
	changed := false
	for _, kk := range sameNotification(k) {
		if u.refreshOne(kk) {
			changed = true
		}
	}
	if changed {
		u.notifyListChanged(k)
	}
}

// refreshOne refetches one list and reports whether the items differ.
func (u *upstream) refreshOne(k kind) bool {
	before, known := u.g.live().names.items(k, u.base)
	if !known {
		return true
	}
	items, err := u.fetchList(u.g.ctx, k)
	if err != nil {
		u.log.Warn("refreshing a changed list failed", "method", kinds[k].list, "err", err)
		return true // what clients see changed: this server's items are gone for now
	}
	u.g.live().names.update(k, []listResult{{up: u.base, items: items}})
	if len(items) != len(before) {
		return true
	}
	for i := range items {
		if !bytes.Equal(items[i].raw, before[i].raw) {
			return true
		}
	}
	return false
}

// notifyListChanged sends the gateway's own list_changed to every client
// that sees u's lists.
func (u *upstream) notifyListChanged(k kind) {
	for _, s := range u.audience() {
		s.notify(kinds[k].changed, nil)
	}
	for _, l := range u.listenersOf(k) {
		l.listChanged(k)
	}
}

// audience is the sessions that see what u sends: its session, for an
// isolated server's instance; else every initialized session.
func (u *upstream) audience() []*session {
	if u.owner != nil {
		if u.owner.isInitialized() {
			return []*session{u.owner}
		}
		return nil
	}
	return u.g.snapshotSessions()
}

// upstreamGone tells clients that an upstream's items went away.
func (g *Gateway) upstreamGone(u *upstream) {
	g.discovery.forget(u) // what it lists when it comes back may differ
	for _, k := range []kind{kindTools, kindPrompts, kindResources} {
		if _, known := g.live().names.items(k, u.base); known {
			u.notifyListChanged(k)
		}
	}
}
