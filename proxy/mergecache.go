package proxy

import "encoding/json"

// A merged list is kept for the next client that asks before anything in
// it changed: a list served from the upstreams' caches, or fetched again
// from servers that sent the same bytes (a one-page list sent again is its
// last fetch's items, catalog.go), is then answered with the bytes merged
// for the last one, not merged (renamed item by item, thousands of them,
// into a new buffer of megabytes) again.

// mergedList is one kind's last merged list, and what it was made from.
type mergedList struct {
	names   uint64       // the name table's generation it was named with
	from    []mergedPart // per configured server, in config order
	out     json.RawMessage
	servers []string
}

// mergedPart is one server's part of a merged list. A list is replaced,
// never changed in place, so the same first item and length are the same
// list; an isolated server's instance has lists of its own, and a private
// or session-dependent list is another list.
type mergedPart struct {
	up      *upstream
	first   *item
	n       int
	skipped bool
}

func partsOf(results []listResult) []mergedPart {
	parts := make([]mergedPart, len(results))
	for i, r := range results {
		parts[i] = mergedPart{up: r.up, n: len(r.items), skipped: r.skipped}
		if len(r.items) > 0 {
			parts[i].first = &r.items[0]
		}
	}
	return parts
}

// cachedMerge returns the list merged last from the same results, if the
// names it was made with are still current.
func (t *nameTable) cachedMerge(k kind, results []listResult) (*mergedList, bool) {
	t.mu.RLock()
	m := t.merged[k]
	current := m != nil && m.names == t.generation[k]
	t.mu.RUnlock()
	if !current || len(m.from) != len(results) {
		return nil, false
	}
	for i, r := range results {
		p := m.from[i]
		if r.err != nil || p.up != r.up || p.skipped != r.skipped || p.n != len(r.items) || (p.n > 0 && p.first != &r.items[0]) {
			return nil, false
		}
	}
	return m, true
}

// keepMerged remembers a merged list made with the names of generation
// names.
func (t *nameTable) keepMerged(k kind, names uint64, results []listResult, out json.RawMessage, servers []string) {
	// Capped: whoever adds to a list answered from here makes a copy.
	m := &mergedList{names: names, from: partsOf(results), out: out[:len(out):len(out)], servers: servers}
	t.mu.Lock()
	defer t.mu.Unlock()
	if names == t.generation[k] {
		t.merged[k] = m
	}
}

// exposedView is one generation of a kind's exposed names: by route, and
// by index in each server's list as the table last saw it. Its maps are
// never changed once made (rebuild replaces them), so they may be read
// without the lock.
type exposedView struct {
	of map[route]string
	in map[*upstream][]ownExposed
}

// ownExposed is an item's own name and the name clients see for it.
type ownExposed struct{ own, exposed string }

// exposedNames returns the kind's exposed names, and the generation of
// the table.
func (t *nameTable) exposedNames(k kind) (exposedView, uint64) {
	t.mu.RLock()
	defer t.mu.RUnlock()
	return exposedView{t.exposedOf[k], t.exposedIn[k]}, t.generation[k]
}

// exposedAs is the name a client sees for the item of up named name, at
// index i of its list: from v (exposedNames, taken when the merge began),
// or, for an item new since, made now. A list merged is almost always the
// one the table was made from, or one with the same names: the name at the
// same index is then the answer, without hashing a route for each of
// thousands of items; the map answers the rest alike.
func (t *nameTable) exposedAs(k kind, v exposedView, up *upstream, i int, name string) string {
	if in := v.in[up]; i < len(in) && in[i].own == name {
		return in[i].exposed
	}
	if exposed, ok := v.of[route{up, name}]; ok {
		return exposed
	}
	return t.expose(k, up.name, name)
}
