package rawjson

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
)

// ObjectsValid splits an array of objects known to be valid JSON (a list
// result's items) into its elements and each element's members, in one
// pass. It does what ElementsValid and then SplitValid on each element do,
// which walked every item twice; and the members of all elements share
// one backing array, so that a list of five thousand tools costs a handful
// of allocations rather than one per tool. Each element's members are
// capped: appending to one copies it.
//
// An element that is not an object, or has a key twice, is an
// *ElementError naming its index.
func ObjectsValid(arr []byte) (elems []json.RawMessage, members []MemberList, err error) {
	defer func() {
		if recover() != nil { // only reachable with invalid input
			elems, members, err = nil, nil, errors.New("invalid JSON array")
		}
	}()
	i := skipSpace(arr, 0)
	if i >= len(arr) || arr[i] != '[' {
		return nil, nil, errors.New("not a JSON array")
	}
	list, _, err := splitObjects(arr, i, ObjectsSize{})
	if err != nil {
		return nil, nil, err
	}
	return list.Elems, list.Members, nil
}

// ObjectList is an array of objects split by ObjectsValid.
type ObjectList struct {
	Elems   []json.RawMessage
	Members []MemberList
}

// SplitWithObjects is SplitValid that also splits, in the same pass, the
// array of objects under key (a list result's items), as ObjectsValid
// would: a list of thousands of tools is walked once, not once for the
// result and once more for its items. list is nil when key is absent or
// not an array; an error in the array is its ObjectsValid error.
func SplitWithObjects(obj []byte, key string) (ms MemberList, list *ObjectList, err error) {
	return SplitWithObjectsSized(obj, key, ObjectsSize{})
}

// ObjectsSize is how many elements, and members in all, an array of
// objects is expected to have: the last list of the same server, whose
// next one is mostly the same. The split then allocates once, not again
// each time an array outgrows itself.
type ObjectsSize struct{ Elems, Members int }

// SplitWithObjectsSized is SplitWithObjects for an array of about size.
func SplitWithObjectsSized(obj []byte, key string, size ObjectsSize) (ms MemberList, list *ObjectList, err error) {
	if ms, list, ok := takeObjects(obj, key); ok {
		return ms, list, nil
	}
	takeArraysOf(key)
	defer func() {
		if recover() != nil { // only reachable with invalid input
			ms, list, err = nil, nil, errors.New("invalid JSON object")
		}
	}()
	i := skipSpace(obj, 0)
	if i >= len(obj) || obj[i] != '{' {
		return nil, nil, errors.New("not a JSON object")
	}
	ms = make(MemberList, 0, 4)
	var seen keySet
	for i = skipSpace(obj, i+1); obj[i] != '}'; {
		keyEnd := skipString(obj, i)
		name, err := internKey(obj[i:keyEnd], bytes.IndexByte(obj[i:keyEnd], '\\') >= 0)
		if err != nil {
			return ms, nil, err
		}
		i = skipSpace(obj, keyEnd)
		i = skipSpace(obj, i+1) // the colon
		var end int
		if name == key && obj[i] == '[' && list == nil {
			if list, end, err = splitObjects(obj, i, size); err != nil {
				return ms, nil, err
			}
		} else {
			end = skipValue(obj, i)
		}
		if seen.repeated(ms, name) {
			return ms, nil, fmt.Errorf("duplicate member %q", name)
		}
		ms = append(ms, Member{Key: name, Value: obj[i:end:end], Start: i})
		if i = skipSpace(obj, end); obj[i] == ',' {
			i = skipSpace(obj, i+1)
		}
	}
	return ms, list, nil
}

// splitObjects splits the array of objects at arr[i] and returns the index
// just past it.
func splitObjects(arr []byte, i int, size ObjectsSize) (*ObjectList, int, error) {
	// Per element, where its members start in all: the slices are cut once
	// all is complete, so that none points into an array outgrown. A
	// little room beyond the size expected spares a list that grew by a
	// few items a copy of everything.
	bounds := make([]int, 0, size.Elems+size.Elems/16)
	elems := make([]json.RawMessage, 0, size.Elems+size.Elems/16)
	all := make([]Member, 0, max(8, size.Members+size.Members/16))
	for i = skipSpace(arr, i+1); arr[i] != ']'; {
		if arr[i] != '{' {
			return nil, 0, &ElementError{len(elems), errors.New("not a JSON object")}
		}
		bounds = append(bounds, len(all))
		var end int
		var err error
		if all, end, err = appendMembers(all, arr, i); err != nil {
			return nil, 0, &ElementError{len(elems), err}
		}
		elems = append(elems, arr[i:end:end])
		if i = skipSpace(arr, end); arr[i] == ',' {
			i = skipSpace(arr, i+1)
		}
	}
	members := make([]MemberList, len(elems))
	for n, start := range bounds {
		end := len(all)
		if n+1 < len(bounds) {
			end = bounds[n+1]
		}
		members[n] = all[start:end:end]
	}
	return &ObjectList{elems, members}, i + 1, nil
}

// ElementError is an array element that is not what was expected.
type ElementError struct {
	Index int
	Err   error
}

func (e *ElementError) Error() string { return fmt.Sprintf("[%d]: %v", e.Index, e.Err) }

func (e *ElementError) Unwrap() error { return e.Err }

// appendMembers appends the members of the object at obj[i] to all, with
// offsets counted from i, and returns the index just past the object. The
// object is known to be valid JSON.
func appendMembers(all []Member, obj []byte, i int) ([]Member, int, error) {
	base := i
	first := len(all)
	var seen keySet
	for i = skipSpace(obj, i+1); obj[i] != '}'; {
		keyEnd := skipString(obj, i)
		key, err := internKey(obj[i:keyEnd], bytes.IndexByte(obj[i:keyEnd], '\\') >= 0)
		if err != nil {
			return all, 0, err
		}
		i = skipSpace(obj, keyEnd)
		i = skipSpace(obj, i+1) // the colon
		end := skipValue(obj, i)
		if seen.repeated(all[first:], key) {
			return all, 0, fmt.Errorf("duplicate member %q", key)
		}
		all = append(all, Member{Key: key, Value: obj[i:end:end], Start: i - base})
		if i = skipSpace(obj, end); obj[i] == ',' {
			i = skipSpace(obj, i+1)
		}
	}
	return all, i + 1, nil
}
