package proxy

import "weak"

// policyNames are the names a server's last list was shown to the list
// policies under, by index: a list fetched again (every tools/list of a
// server that does not say when its list changes) is almost always the
// same, and its names are then read here rather than made again, one
// string apiece for thousands of items.
type policyNames struct {
	table   weak.Pointer[nameTable] // the names were made by this table's rules (weak: it holds every server of its day)
	server  string
	shown   []string // an item's name as shown (after a rename)
	exposed []string // "": none at that index
}

// policyNamer gives the names of one list, from the last list's where the
// item at the same index has the same name, and keeps those of this one
// for the next when any differed.
type policyNamer struct {
	last  *policyNames
	fresh *policyNames // nil while every name came from last
	table *nameTable
	k     kind
	up    *upstream
	n     int // items in the list
}

func newPolicyNamer(sp *serverPolicies, k kind, up *upstream, n int) policyNamer {
	nt := up.g.live().names
	last := sp.names[k].Load()
	if last != nil && (last.table != weak.Make(nt) || last.server != up.name) {
		last = nil
	}
	return policyNamer{last: last, table: nt, k: k, up: up, n: n}
}

// name is the exposed name of the item at index i, shown as shown.
func (p *policyNamer) name(i int, shown string) string {
	if l := p.last; l != nil && i < len(l.shown) && l.exposed[i] != "" && l.shown[i] == shown {
		if p.fresh != nil {
			p.fresh.shown[i], p.fresh.exposed[i] = shown, l.exposed[i]
		}
		return l.exposed[i]
	}
	exposed := p.table.expose(p.k, p.up.name, shown)
	if p.fresh == nil {
		p.fresh = &policyNames{table: weak.Make(p.table), server: p.up.name, shown: make([]string, p.n), exposed: make([]string, p.n)}
		if l := p.last; l != nil {
			copy(p.fresh.shown[:min(i, p.n)], l.shown[:min(i, len(l.shown))])
			copy(p.fresh.exposed[:min(i, p.n)], l.exposed[:min(i, len(l.exposed))])
		}
	}
	p.fresh.shown[i], p.fresh.exposed[i] = shown, exposed
	return exposed
}

// keep remembers this list's names for the next, if any was made anew.
func (p *policyNamer) keep(sp *serverPolicies) {
	if p.fresh != nil {
		sp.names[p.k].Store(p.fresh)
	}
}
