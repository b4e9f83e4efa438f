package rawjson

import (
	"sync"
	"weak"
)

// The splits that Incremental made of messages it scanned as they arrived
// are remembered here, so that splitting such a message once it is whole
// (Members, MembersNested, SplitValid) costs no second pass over its
// megabytes: the reader that validated the bytes and the code that splits
// them are layers apart, joined by nothing but the bytes.
//
// An entry is found by identity, never by content: its key is a weak
// pointer to the value's first byte, which equals another only when made
// from the same byte of the same live object (weak.Pointer's contract; a
// new object at a freed one's address gets a new key), and its size must
// match too. Messages are not changed in place once read, so the same
// first byte and size are the same bytes. An entry holds offsets, not
// slices, so it keeps nothing alive: a message collected leaves an entry
// that can never match again, dropped when the table is full. (A value
// looked up must be Go memory, as weak.Make requires: the gateway's are.)
//
// A full table drops the entry used longest ago, never at random: a
// message is remembered, then its result, and then split, so the entries
// remembered or recalled last are those of the messages being worked on.

// memoMin is the smallest value looked up: smaller ones are scanned
// faster than the table is consulted (and Incremental scans only lines
// longer than a reader's buffer).
const memoMin = 64 << 10

// memoMax bounds the table: a few big messages are in flight at once.
const memoMax = 32

// memoMaxMembers bounds the members an entry records: a message is big for
// its strings (a tool's text), and one big for its number of members would
// leave a record of each in the table long after it is gone.
const memoMaxMembers = 1024

type memoEntry struct {
	size     int
	members  []memoMember
	innerKey string       // the member whose object value inner splits; "" for none
	inner    []memoMember // offsets from that value's start
	uriKey   bool         // a member named "uri" may be in the value, below its top level
	objects  *memoObjects // an array of objects among members, split (incremental_objects.go)
	used     uint64       // memo.clock when last remembered or recalled
}

type memoMember struct {
	key        string
	start, end int // the value's offsets
}

// memoMaxObjectBytes bounds the arrays of objects the entries hold split
// (incremental_objects.go), about 56 bytes an item: a split is kept until
// taken, and at most 32 of up to 16,384 members each were some 29 MB.
const memoMaxObjectBytes = 8 << 20

var memo struct {
	mu          sync.Mutex
	entries     map[weak.Pointer[byte]]memoEntry
	objectBytes int    // the size of the entries' objects
	clock       uint64 // counts the uses of entries, to tell the oldest
}

// remember records the split of v.
func remember(v []byte, e memoEntry) {
	if len(v) < memoMin || len(e.members)+len(e.inner) > memoMaxMembers {
		return
	}
	key := weak.Make(&v[0])
	memo.mu.Lock()
	defer memo.mu.Unlock()
	if memo.entries == nil {
		memo.entries = make(map[weak.Pointer[byte]]memoEntry)
	}
	if old, ok := memo.entries[key]; ok {
		forget(key, old)
	}
	if e.objects.size() > memoMaxObjectBytes {
		e.objects = nil // bigger than the bound alone: SplitWithObjects splits it
	}
	if len(memo.entries) >= memoMax || memo.objectBytes+e.objects.size() > memoMaxObjectBytes {
		for k, old := range memo.entries {
			if k.Value() == nil {
				forget(k, old)
			}
		}
		for len(memo.entries) >= memoMax {
			k, old, _ := oldestEntry(func(memoEntry) bool { return true })
			forget(k, old) // the table is a shortcut: losing one costs a scan
		}
		// The byte bound is on the splits of arrays alone: the rest of an
		// entry is small, and dropping it would cost a scan of its message.
		for memo.objectBytes+e.objects.size() > memoMaxObjectBytes {
			k, old, ok := oldestEntry(func(e memoEntry) bool { return e.objects != nil })
			if !ok {
				break
			}
			memo.objectBytes -= old.objects.size()
			old.objects = nil
			memo.entries[k] = old
		}
	}
	memo.objectBytes += e.objects.size()
	memo.clock++
	e.used = memo.clock
	memo.entries[key] = e
}

// oldestEntry returns the entry used longest ago of those that match;
// false if none does. (Guarded by memo.mu.)
func oldestEntry(match func(memoEntry) bool) (k weak.Pointer[byte], e memoEntry, ok bool) {
	for key, cur := range memo.entries {
		if match(cur) && (!ok || cur.used < e.used) {
			k, e, ok = key, cur, true
		}
	}
	return k, e, ok
}

// forget drops the entry e under k. (Guarded by memo.mu.)
func forget(k weak.Pointer[byte], e memoEntry) {
	memo.objectBytes -= e.objects.size()
	delete(memo.entries, k)
}

// recall returns the split remembered for v.
func recall(v []byte) (memoEntry, bool) {
	if len(v) < memoMin {
		return memoEntry{}, false
	}
	key := weak.Make(&v[0])
	memo.mu.Lock()
	defer memo.mu.Unlock()
	e, ok := memo.entries[key]
	if !ok || e.size != len(v) {
		return memoEntry{}, false
	}
	memo.clock++
	e.used = memo.clock
	memo.entries[key] = e
	return e, true
}

// memberList makes ms, offsets from v's start, members of v.
func memberList(v []byte, ms []memoMember) MemberList {
	out := make(MemberList, len(ms))
	for i, m := range ms {
		out[i] = Member{Key: m.key, Value: v[m.start:m.end:m.end], Start: m.start}
	}
	return out
}

// recallSplit returns the members of v, and those of its member nested
// when that is an object, as remembered.
func recallSplit(v []byte, nested string) (ms, inner MemberList, ok bool) {
	e, ok := recall(v)
	if !ok {
		return nil, nil, false
	}
	ms = memberList(v, e.members)
	if nested != "" && nested == e.innerKey {
		if val, found := ms.Get(nested); found {
			inner = memberList(val, e.inner)
		}
	}
	return ms, inner, true
}

// NoURIKey reports whether v is known, from the scan that validated it,
// to hold no member named "uri" below its top level. False says nothing.
func NoURIKey(v []byte) bool {
	e, ok := recall(v)
	return ok && !e.uriKey
}
