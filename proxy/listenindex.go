package proxy

// A server's list change is told to the listen requests that hear of it.
// Finding them by a walk of all the gateway's (up to maxListeners), under
// its lock, made each change of each server's list cost every listen open,
// wanted or not. So the listeners are indexed by what they hear: by list,
// for a server all sessions share, and by session, for an isolated
// server's instance (whose changes its own session alone hears).

// listenIndex is the gateway's listeners by what they hear. Its zero value
// is empty. g.mu guards it; it changes only with g.listeners (sharecount.go).
type listenIndex struct {
	byKind    [numKinds]map[*listener]struct{}    // the listeners that want list k
	bySession map[*session]map[*listener]struct{} // the listeners of each session
}

func (ix *listenIndex) add(l *listener) {
	for k, wanted := range l.lists {
		if wanted {
			addTo(&ix.byKind[k], l)
		}
	}
	if ix.bySession == nil {
		ix.bySession = map[*session]map[*listener]struct{}{}
	}
	own := ix.bySession[l.s]
	addTo(&own, l)
	ix.bySession[l.s] = own
}

func (ix *listenIndex) remove(l *listener) {
	for k := range ix.byKind {
		delete(ix.byKind[k], l)
	}
	if own := ix.bySession[l.s]; own != nil {
		if delete(own, l); len(own) == 0 {
			delete(ix.bySession, l.s)
		}
	}
}

func addTo(set *map[*listener]struct{}, l *listener) {
	if *set == nil {
		*set = map[*listener]struct{}{}
	}
	(*set)[l] = struct{}{}
}

// hearing returns the listeners that hear of a change of list k made by
// an isolated server's instance for owner, or by a shared server (owner
// nil); nil when none does.
func (ix *listenIndex) hearing(owner *session, k kind) []*listener {
	var out []*listener
	if owner == nil {
		for l := range ix.byKind[k] {
			out = append(out, l)
		}
		return out
	}
	for l := range ix.bySession[owner] {
		if l.lists[k] {
			out = append(out, l)
		}
	}
	return out
}
