package pin

import (
	"bytes"
	"hash/maphash"
	"sync"
)

// A gateway whose servers are pinned checks every definition of every list
// it fetches, and a server that does not say when its list changes is
// listed at every client's request: the same definitions, thousands of
// them, each decoded, re-encoded field by field and hashed with SHA-256
// again (most of a list's cost with a lock). So a lock remembers what it
// answered for each definition's exact bytes (compared whole, never
// trusted to a hash), until an entry is added.

// maxChecked and maxCheckedBytes bound what a lock remembers; past either
// it forgets all at once and checks again as lists come.
const (
	maxChecked      = 1 << 14
	maxCheckedBytes = 32 << 20
)

type checkedKey struct {
	server, kind string
	hash         uint64
}

// checkedAnswer is Check's answer for one definition. Never changed once
// made; its fields are shared, and callers only read them.
type checkedAnswer struct {
	definition []byte // a copy
	status     Status
	fields     []string
	err        error
}

// checkedMemo is a lock's memory of its answers. Its zero value is empty.
type checkedMemo struct {
	mu    sync.Mutex
	by    map[checkedKey][]*checkedAnswer // a hash collision only adds an answer
	n     int                             // answers in by
	bytes int                             // definition bytes they hold
}

var checkedSeed = maphash.MakeSeed()

// answer returns the answer remembered for definition, if any, and the key
// to remember a new one under.
func (m *checkedMemo) answer(server, kind string, definition []byte) (*checkedAnswer, checkedKey) {
	key := checkedKey{server, kind, maphash.Bytes(checkedSeed, definition)}
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, a := range m.by[key] {
		if bytes.Equal(a.definition, definition) {
			return a, key
		}
	}
	return nil, key
}

// remember keeps a, the answer for definition, under key, with a copy of
// definition (a's own is not read).
func (m *checkedMemo) remember(key checkedKey, definition []byte, a checkedAnswer) {
	if len(definition) > maxCheckedBytes {
		return // before anything is forgotten (it would wipe the memory at each fetch), and before the copy
	}
	a.definition = bytes.Clone(definition)
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.by == nil || m.n >= maxChecked || m.bytes+len(a.definition) > maxCheckedBytes {
		m.by, m.n, m.bytes = map[checkedKey][]*checkedAnswer{}, 0, 0
	}
	m.by[key] = append(m.by[key], &a)
	m.n++
	m.bytes += len(a.definition)
}

// forget drops every answer: the lock changed.
func (m *checkedMemo) forget() {
	m.mu.Lock()
	m.by, m.n, m.bytes = nil, 0, 0
	m.mu.Unlock()
}
