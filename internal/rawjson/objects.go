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
	// Per element, where its members start in all: the slices are cut once
	// all is complete, so that none points into an array outgrown.
	var bounds []int
	all := make([]Member, 0, 8)
	for i = skipSpace(arr, i+1); arr[i] != ']'; {
		if arr[i] != '{' {
			return nil, nil, &ElementError{len(elems), errors.New("not a JSON object")}
		}
		bounds = append(bounds, len(all))
		var end int
		if all, end, err = appendMembers(all, arr, i); err != nil {
			return nil, nil, &ElementError{len(elems), err}
		}
		elems = append(elems, arr[i:end:end])
		if i = skipSpace(arr, end); arr[i] == ',' {
			i = skipSpace(arr, i+1)
		}
	}
	members = make([]MemberList, len(elems))
	for n, start := range bounds {
		end := len(all)
		if n+1 < len(bounds) {
			end = bounds[n+1]
		}
		members[n] = all[start:end:end]
	}
	return elems, members, nil
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
