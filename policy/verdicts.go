package policy

import (
	"bytes"
	"hash/maphash"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/mcpgate/mcpgate/internal/detect/injection"
)

// maxVerdicts bounds the definitions whose verdict is remembered: more
// than the tools of a large gateway. maxVerdictBytes bounds their bytes,
// which are kept to compare. Past either, the verdicts are forgotten all
// at once and made again as lists come.
const (
	maxVerdicts     = 1 << 14
	maxVerdictBytes = 32 << 20
	maxPlaceLists   = 64 // lists whose rows are kept by place: each is scanned to find one
)

// verdictCache remembers what the checker found in each definition, so
// that a list fetched again (every tools/list of a server that does not
// say when its list changes) is not scanned again: definitions rarely
// change. A verdict holds for the definition's exact bytes (compared
// whole, never trusted to a hash), from the same server, checked against
// the same index of peers (shadowing depends on the other servers' tools;
// a change to them makes a new index).
//
// A list like the server's last one is answered by place, without the
// cache's lock: the definition at each index is the one there last time,
// its bytes compared, or the very same bytes (see placed). Hashing every
// definition (two 64-bit hashes, as this cache did) and a map lookup under
// the lock cost several times a comparison on a list of thousands; the
// hash now finds a definition that moved.
type verdictCache struct {
	mu     sync.Mutex
	by     map[verdictKey][]*verdictRow // by server and one hash of the bytes; a collision only adds a row
	rows   int                          // rows in by
	bytes  int                          // definition bytes the rows hold
	places atomic.Pointer[[]*placeRows] // each list's rows by index; the slice replaced whole, under mu
	scans  atomic.Int64                 // definitions checked, not answered from here
}

// verdictKey names a definition by a hash of its bytes with a seed of this
// process: the rows under it are then compared whole.
type verdictKey struct {
	server string
	hash   uint64
}

var verdictSeed = maphash.MakeSeed()

// listOf names one server's list of one kind ("tool", "prompt").
type listOf struct{ server, kind string }

// verdictRow is one definition's verdict. Rows are not changed once made,
// so they are read without the lock.
type verdictRow struct {
	definition []byte // a copy: a row outlives the message it was made from (placed keeps that only until the next list)
	peers      *injection.Peers
	found      []injection.DefinitionFinding
	err        error
}

func (r *verdictRow) holds(definition []byte, peers *injection.Peers) bool {
	return r != nil && r.peers == peers && bytes.Equal(r.definition, definition)
}

// placeRows are the rows of one list's definitions, by index, as last
// checked: a hint, each believed only for the same bytes.
type placeRows struct {
	list  listOf
	mu    sync.Mutex // guards the rest; taken after verdictCache.mu, never before
	at    []placed
	next  int // the place after the last one checked
	reach int // the places the pass over the list now going has reached
}

// pass notes that place is checked. A place not after the last one begins
// another pass over the list: the places past the end of the pass before
// are left from older, longer lists, and are dropped with the bytes they
// hold (each a page of its own, a server whose list shrinks at every
// fetch would otherwise keep one page per list). (Guarded by mu.)
func (pr *placeRows) pass(place int) {
	if place < pr.next {
		end := min(pr.reach, len(pr.at))
		clear(pr.at[end:])
		pr.at, pr.reach = pr.at[:end], 0
	}
	pr.next, pr.reach = place+1, max(pr.reach, place+1)
}

// placed is the row at one place, and the caller's bytes last found to
// hold its definition there. Those are the list's own: the gateway never
// changes a message it gave a policy, so the same bytes at the same
// address (the list sent again, not read anew) are the same definition,
// known without comparing them. The next list's bytes replace them, and
// its end drops the places past it (pass), so that only the memory of
// the last two lists is kept.
type placed struct {
	row  *verdictRow
	seen []byte
}

// check returns the checker's findings in definition, remembered or made.
// at is the definition's list and place its index there (-1: none). The
// findings are shared: callers only read them.
func (v *verdictCache) check(checker func() *injection.Checker, definition []byte, at listOf, place int, peers *injection.Peers) ([]injection.DefinitionFinding, error) {
	if row := v.rowAt(at, place, definition, peers); row != nil {
		return row.found, row.err
	}
	key := verdictKey{at.server, maphash.Bytes(verdictSeed, definition)}
	v.mu.Lock()
	for _, row := range v.by[key] {
		if row.holds(definition, peers) {
			v.setPlace(at, place, row, definition)
			v.mu.Unlock()
			return row.found, row.err
		}
	}
	v.mu.Unlock()
	v.scans.Add(1)
	found, err := checker().Check(definition, at.server, peers)
	if len(definition) > maxVerdictBytes {
		// Refused before anything is forgotten: one such definition per
		// fetch (max_message_bytes above the bound) would otherwise wipe
		// every verdict each time.
		return found, err
	}
	row := &verdictRow{definition: bytes.Clone(definition), peers: peers, found: found, err: err}
	v.mu.Lock()
	if v.by == nil || v.rows >= maxVerdicts || v.bytes+len(definition) > maxVerdictBytes {
		v.by, v.rows, v.bytes = map[verdictKey][]*verdictRow{}, 0, 0
		v.places.Store(nil)
	}
	v.by[key] = append(v.by[key], row)
	v.rows++
	v.bytes += len(definition)
	v.setPlace(at, place, row, definition)
	v.mu.Unlock()
	return found, err
}

// rowAt is the row last checked at place in list l if it holds
// definition, checked against peers; nil otherwise.
func (v *verdictCache) rowAt(l listOf, place int, definition []byte, peers *injection.Peers) *verdictRow {
	pr := v.placesOf(l)
	if pr == nil || place < 0 {
		return nil
	}
	pr.mu.Lock()
	defer pr.mu.Unlock()
	pr.pass(place)
	if place >= len(pr.at) {
		return nil
	}
	p := &pr.at[place]
	if p.row == nil || p.row.peers != peers {
		return nil
	}
	if !sameMemory(p.seen, definition) {
		if !bytes.Equal(p.row.definition, definition) {
			return nil
		}
		p.seen = definition
	}
	return p.row
}

// sameMemory reports whether a and b are the same bytes of memory.
func sameMemory(a, b []byte) bool {
	return len(a) == len(b) && len(a) > 0 && &a[0] == &b[0]
}

// placesOf is list l's rows, or nil. The lists are few (the servers' tools
// and prompts): a scan of them is cheaper than a map's hash of the names.
func (v *verdictCache) placesOf(l listOf) *placeRows {
	if all := v.places.Load(); all != nil {
		for _, pr := range *all {
			if pr.list == l {
				return pr
			}
		}
	}
	return nil
}

// setPlace records row at place in list l, found in definition; a place
// past the rows the cache may hold is not recorded. (Guarded by mu.)
func (v *verdictCache) setPlace(l listOf, place int, row *verdictRow, definition []byte) {
	if place < 0 || place >= maxVerdicts {
		return
	}
	pr := v.placesOf(l)
	if pr == nil {
		var all []*placeRows
		if old := v.places.Load(); old != nil {
			all = *old
		}
		if len(all) == maxPlaceLists {
			return // the hash finds its verdicts
		}
		pr = &placeRows{list: l, next: place + 1, reach: place + 1}
		all = append(slices.Clip(all), pr)
		v.places.Store(&all)
	}
	pr.mu.Lock()
	if place >= len(pr.at) {
		pr.at = append(pr.at, make([]placed, place+1-len(pr.at))...)
	}
	pr.at[place] = placed{row, definition}
	pr.mu.Unlock()
}
