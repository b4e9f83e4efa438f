package policy

import (
	"hash/maphash"
	"sync"
	"sync/atomic"

	"github.com/mcpgate/mcpgate/internal/detect/injection"
)

// maxVerdicts bounds the definitions whose verdict is remembered: more
// than the tools of a large gateway, and a few megabytes at most. Past it
// the verdicts are forgotten all at once and made again as lists come.
const maxVerdicts = 1 << 14

// verdictCache remembers what the checker found in each definition, so
// that a list fetched again (every tools/list of a server that does not
// say when its list changes) is not scanned again: definitions rarely
// change. A verdict holds for the definition's exact bytes, from the same
// server, checked against the same index of peers (shadowing depends on
// the other servers' tools; a change to them makes a new index).
type verdictCache struct {
	mu    sync.Mutex
	by    map[verdictKey]verdict
	scans atomic.Int64 // definitions checked, not answered from here
}

// verdictKey names a definition by two hashes of its bytes with seeds of
// this process: 128 bits no server can aim a collision at (it never sees
// a hash), at a fraction of a cryptographic hash's cost, which on a list of
// thousands would be most of what the cache saves.
type verdictKey struct {
	server     string
	definition [2]uint64
}

var verdictSeeds = [2]maphash.Seed{maphash.MakeSeed(), maphash.MakeSeed()}

type verdict struct {
	peers *injection.Peers
	found []injection.DefinitionFinding
	err   error
}

// check returns the checker's findings in definition, remembered or made.
// The findings are shared: callers only read them.
func (v *verdictCache) check(checker func() *injection.Checker, definition []byte, server string, peers *injection.Peers) ([]injection.DefinitionFinding, error) {
	key := verdictKey{server, [2]uint64{maphash.Bytes(verdictSeeds[0], definition), maphash.Bytes(verdictSeeds[1], definition)}}
	v.mu.Lock()
	got, ok := v.by[key]
	v.mu.Unlock()
	if ok && got.peers == peers {
		return got.found, got.err
	}
	v.scans.Add(1)
	found, err := checker().Check(definition, server, peers)
	v.mu.Lock()
	if v.by == nil || len(v.by) >= maxVerdicts {
		v.by = make(map[verdictKey]verdict)
	}
	v.by[key] = verdict{peers, found, err}
	v.mu.Unlock()
	return found, err
}
