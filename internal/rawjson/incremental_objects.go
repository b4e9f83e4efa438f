package rawjson

import (
	"encoding/json"
	"slices"
	"sync/atomic"
	"unsafe"
	"weak"
)

// An Incremental scan also splits, in the same pass, an array of objects
// that is a member of the nested object "result": a list result's items,
// thousands of tools. SplitWithObjects then finds them in the memo rather
// than walking the megabytes of a list once more after the scan that
// validated them. Only the first such array of the nested object is split,
// only under a key SplitWithObjects was asked for before (what nobody
// takes is not kept: a tool's result has its content, a request its
// arrays), and only while every element is an object; anything else is
// left to SplitWithObjects's own pass.

// objectsScan is what a scan has split of that array so far.
type objectsScan struct {
	state   objectsState
	nested  int        // the nested object's index among the top level's members
	member  int        // the array's index among the nested object's members
	elems   []elemSpan // the elements, their offsets in the message
	members []span     // every element's members, in order
	key     span       // the element's member in progress
}

// elemSpan is an element of the array, and where its members start in
// objectsScan.members.
type elemSpan struct{ start, end, first int }

type objectsState uint8

const (
	objectsNone      objectsState = iota // no array seen yet
	objectsSplit                         // inside the array, splitting it
	objectsDone                          // the array is split
	objectsAbandoned                     // an element was not an object
)

// maxSplitMembers bounds the elements, and the members, a scan splits out
// of an array: past it, SplitWithObjects makes its own pass. The memo
// holds a split until it is taken (32 of them at most).
const maxSplitMembers = 1 << 14

// takenKeys are the keys SplitWithObjects was asked to split arrays under
// (a list result's "tools", "prompts"...): the arrays a scan splits. At
// most maxTakenKeys; replaced whole, never changed.
var takenKeys atomic.Pointer[[]string]

const maxTakenKeys = 8

// takeArraysOf adds key to takenKeys.
func takeArraysOf(key string) {
	for {
		old := takenKeys.Load()
		var keys []string
		if old != nil {
			keys = *old
		}
		if slices.Contains(keys, key) || len(keys) == maxTakenKeys {
			return
		}
		grown := append(slices.Clip(keys), key)
		if takenKeys.CompareAndSwap(old, &grown) {
			return
		}
	}
}

// takenArray reports whether an array under the key literal lit (quoted,
// as in the message) is split by a scan: its key is one of takenKeys, not
// escaped.
func takenArray(lit []byte) bool {
	keys := takenKeys.Load()
	if keys == nil || len(lit) < 2 {
		return false
	}
	for _, k := range *keys {
		if string(lit[1:len(lit)-1]) == k {
			return true
		}
	}
	return false
}

// maxKeptElems bounds the elements whose spans a scan keeps room for, for
// the next line: a server's next list most likely has as many, and
// growing the room again for each would make more garbage than the list
// itself. Room for a few thousand tools (a quarter of a megabyte), not for
// whatever one line once held.
const maxKeptElems = 2048

func (o *objectsScan) reset() {
	*o = objectsScan{elems: o.elems[:0], members: o.members[:0]}
	if cap(o.elems) > maxKeptElems {
		o.elems = nil
	}
	if cap(o.members) > 4*maxKeptElems {
		o.members = nil
	}
}

// valueStarts notes a value starting at b[i], depth containers deep (the
// nested object's members are 2 deep); the nested object is the top
// level's member number nested, and member is the index its member in
// progress will have; taken is whether someone takes the split of an
// array under that member's key (takenArray).
func (o *objectsScan) valueStarts(b []byte, i, depth, nested, member int, taken bool) {
	switch {
	case depth == 2 && o.state == objectsNone && b[i] == '[' && taken:
		o.state, o.nested, o.member = objectsSplit, nested, member
	case o.state != objectsSplit:
	case depth == 3:
		if b[i] != '{' || len(o.members) > maxSplitMembers || len(o.elems) >= maxSplitMembers {
			o.state = objectsAbandoned
			return
		}
		o.elems = append(o.elems, elemSpan{start: i, first: len(o.members)})
	case depth == 4:
		// One item may have all the members: bounded here, not only at
		// the next item.
		if len(o.members) >= maxSplitMembers {
			o.state = objectsAbandoned
			return
		}
		o.key.valStart = i
	}
}

// keyEnded notes a key b[start:end], depth containers deep.
func (o *objectsScan) keyEnded(start, end, depth int) {
	if depth == 4 && o.state == objectsSplit {
		o.key.keyStart, o.key.keyEnd = start, end
	}
}

// valueEnded notes the end of a value, depth containers deep.
func (o *objectsScan) valueEnded(end, depth int) {
	if o.state != objectsSplit {
		return
	}
	switch depth {
	case 2:
		o.state = objectsDone
	case 3:
		o.elems[len(o.elems)-1].end = end
	case 4:
		o.key.valEnd = end
		o.members = append(o.members, o.key)
	}
}

// memoObjects is an array of objects split by a scan, as the memo keeps
// it: the scan's own spans, offsets in the message, copied. Its keys are
// read, and checked for duplicates, only when the split is taken (list):
// reading them at the scan's end as well made each list's split twice,
// once into the memo and once more into members.
type memoObjects struct {
	key     string // the nested object's member whose value the array is
	base    int    // the nested object's offset in the message
	elems   []elemSpan
	members []span
}

// size is about the memory o holds (0 for nil).
func (o *memoObjects) size() int {
	if o == nil {
		return 0
	}
	return len(o.elems)*int(unsafe.Sizeof(elemSpan{})) + len(o.members)*int(unsafe.Sizeof(span{}))
}

// split returns the array split, the nested object starting at base; nil
// if it was not split. The nested object is the top level's member number
// nested, inner its members.
func (o *objectsScan) split(base, nested int, inner []memoMember) *memoObjects {
	if o.state != objectsDone || o.nested != nested || o.member >= len(inner) {
		return nil
	}
	return &memoObjects{key: inner[o.member].key, base: base, elems: append([]elemSpan(nil), o.elems...), members: append([]span(nil), o.members...)}
}

// takeObjects returns obj's members and its array of objects under key,
// as a scan split them, and lets the memo forget the array: it is split
// once (a list is parsed once), and its offsets are the bulk of an entry.
// False when the scan did not split it, or an element has a key twice
// (SplitWithObjects words that error).
func takeObjects(obj []byte, key string) (MemberList, *ObjectList, bool) {
	e, ok := recall(obj)
	if !ok || e.objects == nil || e.objects.key != key {
		return nil, nil, false
	}
	o := e.objects
	memo.mu.Lock()
	if kept, ok := memo.entries[weak.Make(&obj[0])]; ok && kept.objects == o {
		memo.objectBytes -= o.size()
		kept.objects = nil
		memo.entries[weak.Make(&obj[0])] = kept
	}
	memo.mu.Unlock()
	list, ok := o.list(obj)
	if !ok {
		return nil, nil, false
	}
	return memberList(obj, e.members), list, true
}

// list makes the array split of obj, the nested object it was split in;
// false if an element has a key twice, or a key that does not decode.
func (o *memoObjects) list(obj []byte) (*ObjectList, bool) {
	elems := make([]json.RawMessage, len(o.elems))
	members := make([]MemberList, len(o.elems))
	all := make([]Member, len(o.members))
	var seen keySet
	for n, el := range o.elems {
		start, end := el.start-o.base, el.end-o.base
		elem := obj[start:end:end]
		last := len(o.members)
		if n+1 < len(o.elems) {
			last = o.elems[n+1].first
		}
		seen = keySet{}
		for j := el.first; j < last; j++ {
			sp := o.members[j]
			lit := elem[sp.keyStart-el.start : sp.keyEnd-el.start]
			key, err := internKey(lit, indexBackslash(lit) >= 0)
			if err != nil || seen.repeated(all[el.first:j], key) {
				return nil, false
			}
			vs, ve := sp.valStart-el.start, sp.valEnd-el.start
			all[j] = Member{Key: key, Value: elem[vs:ve:ve], Start: vs}
		}
		elems[n] = elem
		members[n] = all[el.first:last:last]
	}
	return &ObjectList{elems, members}, true
}
