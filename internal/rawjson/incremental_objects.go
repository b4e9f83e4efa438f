package rawjson

import (
	"encoding/json"
	"weak"
)

// An Incremental scan also splits, in the same pass, an array of objects
// that is a member of the nested object ("result"): a list result's items,
// thousands of tools. SplitWithObjects then finds them in the memo rather
// than walking the megabytes of a list once more after the scan that
// validated them. Only the first array member of the nested object is
// split, and only while every element is an object; anything else is left
// to SplitWithObjects's own pass.

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
// progress will have.
func (o *objectsScan) valueStarts(b []byte, i, depth, nested, member int) {
	switch {
	case depth == 2 && o.state == objectsNone && b[i] == '[':
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
// it: offsets, from the nested object's start for the elements, from each
// element's start for its members.
type memoObjects struct {
	key     string // the nested object's member whose value the array is
	elems   []elemSpan
	members []memoMember
}

// split returns the array split, with offsets from base, the nested
// object's start; nil if it was not split, or an element has a key twice
// (SplitWithObjects words that error). The nested object is the top
// level's member number nested, inner its members.
func (o *objectsScan) split(b []byte, base, nested int, inner []memoMember) *memoObjects {
	if o.state != objectsDone || o.nested != nested || o.member >= len(inner) {
		return nil
	}
	out := &memoObjects{key: inner[o.member].key, elems: make([]elemSpan, len(o.elems)), members: make([]memoMember, len(o.members))}
	var ms MemberList // for seen, which compares keys
	for n, e := range o.elems {
		last := len(o.members)
		if n+1 < len(o.elems) {
			last = o.elems[n+1].first
		}
		var seen keySet
		ms = ms[:0]
		for j := e.first; j < last; j++ {
			sp := o.members[j]
			lit := b[sp.keyStart:sp.keyEnd]
			key, err := internKey(lit, indexBackslash(lit) >= 0)
			if err != nil || seen.repeated(ms, key) {
				return nil
			}
			ms = append(ms, Member{Key: key})
			out.members[j] = memoMember{key: key, start: sp.valStart - e.start, end: sp.valEnd - e.start}
		}
		out.elems[n] = elemSpan{start: e.start - base, end: e.end - base, first: e.first}
	}
	return out
}

// takeObjects returns obj's members and its array of objects under key,
// as a scan split them, and lets the memo forget the array: it is split
// once (a list is parsed once), and its offsets are the bulk of an entry.
// False when the scan did not split it.
func takeObjects(obj []byte, key string) (MemberList, *ObjectList, bool) {
	e, ok := recall(obj)
	if !ok || e.objects == nil || e.objects.key != key {
		return nil, nil, false
	}
	o := e.objects
	memo.mu.Lock()
	if kept, ok := memo.entries[weak.Make(&obj[0])]; ok && kept.objects == o {
		kept.objects = nil
		memo.entries[weak.Make(&obj[0])] = kept
	}
	memo.mu.Unlock()
	return memberList(obj, e.members), o.list(obj), true
}

// list makes the array split of obj, the nested object it was split in.
func (o *memoObjects) list(obj []byte) *ObjectList {
	elems := make([]json.RawMessage, len(o.elems))
	members := make([]MemberList, len(o.elems))
	all := make([]Member, len(o.members))
	for n, el := range o.elems {
		elem := obj[el.start:el.end:el.end]
		last := len(o.members)
		if n+1 < len(o.elems) {
			last = o.elems[n+1].first
		}
		for j := el.first; j < last; j++ {
			m := o.members[j]
			all[j] = Member{Key: m.key, Value: elem[m.start:m.end:m.end], Start: m.start}
		}
		elems[n] = elem
		members[n] = all[el.first:last:last]
	}
	return &ObjectList{elems, members}
}
