package rawjson

import "errors"

// SplitValidInto is SplitValid with the members in into's array when they
// fit (and the split was not remembered), overwriting what it held: a
// reader that reads them at once and keeps none can pass an array of its
// own stack, and the split allocates nothing (a modern request's _meta and
// capabilities are split so on every request).
func SplitValidInto(into MemberList, obj []byte) (MemberList, error) {
	if ms, _, ok := recallSplit(obj, ""); ok {
		return ms, nil
	}
	i := skipSpace(obj, 0)
	if i >= len(obj) || obj[i] != '{' {
		return nil, errors.New("not a JSON object")
	}
	return splitObjectInto(into, obj, i)
}
