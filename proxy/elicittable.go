package proxy

// elicitationTable holds the url-mode elicitations in flight (see
// trackElicitation): by key; by session, so that a session's end takes
// away its own; and in the order they came, so that past maxElicitations
// the oldest is forgotten. Finding either by walking all of them (up to
// 4,096) made every session's end, and every elicitation past the cap,
// cost every client's under g.mu. g.mu guards it; the zero value is
// empty.
type elicitationTable struct {
	byKey     map[elicitationKey]elicitation
	bySession map[*session]map[elicitationKey]struct{}
	// order is every elicitation added, oldest first, from head on. One
	// taken away since stays until it reaches the front (its key then
	// holds another seq, or none), or until order is compacted: it never
	// holds more than twice what byKey does, and a little more, so that
	// each add costs a constant amount, however the others go.
	order []elicitationRef
	head  int
	seq   uint64
}

type elicitationRef struct {
	key elicitationKey
	seq uint64
}

// add records that s was asked for elicitation key, forgetting the oldest
// one when maxElicitations are held.
func (t *elicitationTable) add(key elicitationKey, s *session) {
	if t.byKey == nil {
		t.byKey = map[elicitationKey]elicitation{}
		t.bySession = map[*session]map[elicitationKey]struct{}{}
	}
	t.take(key) // asked again: the newest asker has it
	if len(t.byKey) >= maxElicitations {
		t.take(t.oldest())
	}
	t.seq++
	t.byKey[key] = elicitation{s, t.seq}
	keys := t.bySession[s]
	if keys == nil {
		keys = map[elicitationKey]struct{}{}
		t.bySession[s] = keys
	}
	keys[key] = struct{}{}
	t.order = append(t.order, elicitationRef{key, t.seq})
	if len(t.order) > 2*len(t.byKey)+64 { // counting those before head, which it still holds
		t.compact()
	}
}

// oldest is the key of the oldest elicitation held; some are.
func (t *elicitationTable) oldest() elicitationKey {
	for ; ; t.head++ {
		ref := t.order[t.head]
		if e, ok := t.byKey[ref.key]; ok && e.seq == ref.seq {
			return ref.key
		}
	}
}

// compact drops from order what was taken away.
func (t *elicitationTable) compact() {
	live := make([]elicitationRef, 0, len(t.byKey))
	for _, ref := range t.order[t.head:] {
		if e, ok := t.byKey[ref.key]; ok && e.seq == ref.seq {
			live = append(live, ref)
		}
	}
	t.order, t.head = live, 0
}

// take removes elicitation key and returns the session that was asked,
// nil when none is held.
func (t *elicitationTable) take(key elicitationKey) *session {
	e, ok := t.byKey[key]
	if !ok {
		return nil
	}
	delete(t.byKey, key)
	keys := t.bySession[e.s]
	delete(keys, key)
	if len(keys) == 0 {
		delete(t.bySession, e.s)
	}
	return e.s
}

// dropSession removes the elicitations s was asked.
func (t *elicitationTable) dropSession(s *session) {
	for key := range t.bySession[s] {
		delete(t.byKey, key)
	}
	delete(t.bySession, s)
}
