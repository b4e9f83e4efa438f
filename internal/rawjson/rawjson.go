// Package rawjson reads and edits JSON at the byte level, for a gateway that
// passes messages through: it splits an object into its members and an
// array into its elements without decoding the values, and replaces one
// member's value while copying everything else byte for byte. Keys are
// matched exactly (encoding/json matches them case-insensitively and keeps
// the last of two duplicates; a proxy must not read a message differently
// from the peer behind it), and a duplicate key is an error.
package rawjson

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// Members splits a JSON object into its members, keys unescaped and matched
// exactly. A duplicate key is an error. On error, the members read so far are
// returned too: an id early in a broken message can still be answered.
//
// Valid input, the usual case, is validated and split in one pass by a small
// scanner (scan.go) that allocates nothing but the result; encoding/json's
// tokenizer is several times slower and sits on the path of every message
// the gateway relays. Invalid input takes that slow path, which says why.
func Members(obj []byte) (MemberList, error) {
	ms, _, err := MembersNested(obj, "")
	return ms, err
}

// MembersNested is Members that also splits, in the same pass, the value of
// the member named nested when it is an object (inner is nil otherwise):
// the params of a request, which whoever serves it reads next.
func MembersNested(obj []byte, nested string) (ms, inner MemberList, err error) {
	if ms, inner, ok := recallSplit(obj, nested); ok {
		return ms, inner, nil // validated as it arrived (see memo.go)
	}
	ms, inner, err = splitValidating(obj, nested)
	if err == nil {
		return ms, inner, nil
	}
	ms, err = membersSlow(obj)
	return ms, nil, err
}

// MembersNestedIntoBoth is MembersNested with the object's own members in
// into's array, and inner in innerInto's, when they fit (and the split was
// not remembered), overwriting what they held: a reader that reads them at
// once and copies what it keeps (a message's envelope and params) reuses
// one array for each. A nil array gives its list one of its own.
func MembersNestedIntoBoth(into, innerInto MemberList, obj []byte, nested string) (ms, inner MemberList, err error) {
	if ms, inner, ok := recallSplit(obj, nested); ok {
		return ms, inner, nil
	}
	ms, inner, err = splitValidatingInto(into, innerInto, obj, nested)
	if err == nil {
		return ms, inner, nil
	}
	ms, err = membersSlow(obj)
	return ms, nil, err
}

// SplitValid splits an object known to be valid JSON, such as a member value
// returned by Members: validating it again would only cost time. Anything
// else gets an error, never a panic.
func SplitValid(obj []byte) (MemberList, error) {
	return SplitValidInto(nil, obj)
}

// ElementsValid splits an array known to be valid JSON into its elements.
func ElementsValid(arr []byte) ([]json.RawMessage, error) {
	i := skipSpace(arr, 0)
	if i >= len(arr) || arr[i] != '[' {
		return nil, errors.New("not a JSON array")
	}
	var out []json.RawMessage
	for i = skipSpace(arr, i+1); i < len(arr) && arr[i] != ']'; {
		end := skipValue(arr, i)
		out = append(out, arr[i:end:end])
		if i = skipSpace(arr, end); i < len(arr) && arr[i] == ',' {
			i = skipSpace(arr, i+1)
		}
	}
	return out, nil
}

// splitObjectInto splits the object at obj[i], known to be valid JSON,
// with the members in into's array (its length ignored), grown past it as
// append grows it. A nil into is room for 8, made here, past the paths
// that need none (a remembered split, a value not an object).
func splitObjectInto(into MemberList, obj []byte, i int) (ms MemberList, err error) {
	defer func() {
		if recover() != nil { // only reachable with invalid input
			ms, err = nil, errors.New("invalid JSON object")
		}
	}()
	if into == nil {
		into = make(MemberList, 0, 8)
	}
	ms = into[:0]
	var seen keySet
	i = skipSpace(obj, i+1)
	for obj[i] != '}' {
		keyEnd := skipString(obj, i)
		key, err := internKey(obj[i:keyEnd], bytes.IndexByte(obj[i:keyEnd], '\\') >= 0)
		if err != nil {
			return ms, err
		}
		i = skipSpace(obj, keyEnd)
		i = skipSpace(obj, i+1) // the colon
		end := skipValue(obj, i)
		if seen.repeated(ms, key) {
			return ms, &DuplicateError{Key: key}
		}
		ms = append(ms, Member{Key: key, Value: obj[i:end:end], Start: i})
		i = skipSpace(obj, end)
		if obj[i] == ',' {
			i = skipSpace(obj, i+1)
		}
	}
	return ms, nil
}

// The helpers below assume valid JSON (checked by the validating scanner
// first, or known to be a part of what it checked).

func skipSpace(b []byte, i int) int {
	// Most tokens follow no space: one comparison tells.
	for i < len(b) && b[i] <= ' ' && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// skipString returns the index just past the string that starts at b[i]
// (len(b) when b ends first).
func skipString(b []byte, i int) int {
	if end := StringEnd(b, i+1); end >= 0 {
		return end + 1
	}
	return len(b)
}

// StringEnd returns the index of the quote that ends the string whose body
// starts at b[i], or -1 if b ends first: a reader of a message's first
// bytes, before the rest has come, can tell a string cut short. It jumps
// from quote to quote (IndexByte is vectorised); a quote preceded by an
// odd number of backslashes is escaped.
func StringEnd(b []byte, i int) int {
	for i < len(b) {
		q := bytes.IndexByte(b[i:], '"')
		if q < 0 {
			return -1
		}
		i += q
		bs := 0
		for j := i - 1; j >= 0 && b[j] == '\\'; j-- {
			bs++
		}
		if bs%2 == 0 {
			return i
		}
		i++
	}
	return -1
}

// skipValue returns the index just past the value that starts at b[i].
func skipValue(b []byte, i int) int {
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
		depth := 0
		for ; i < len(b); i++ {
			switch b[i] {
			case '"':
				i = skipString(b, i) - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1
				}
			}
		}
		return i
	}
	for i < len(b) {
		switch b[i] {
		case ',', '}', ']', ' ', '\t', '\n', '\r':
			return i
		}
		i++
	}
	return i
}

// Unquote returns the string a JSON string literal stands for. Plain ASCII
// needs no decoding; escapes and other bytes (invalid UTF-8 becomes U+FFFD)
// go through encoding/json.
func Unquote(lit []byte) (string, error) {
	if len(lit) >= 2 && plainASCII(lit) {
		return string(lit[1 : len(lit)-1]), nil
	}
	var s string
	err := json.Unmarshal(lit, &s)
	return s, err
}

func plainASCII(b []byte) bool {
	for _, c := range b {
		if c >= 0x80 || c == '\\' {
			return false
		}
	}
	return true
}

// membersSlow splits an object that is not valid JSON as far as it goes.
func membersSlow(obj []byte) (MemberList, error) {
	dec := json.NewDecoder(bytes.NewReader(obj))
	dec.UseNumber()
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, errors.New("not a JSON object")
	}
	var ms MemberList
	var seen keySet
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return ms, err
		}
		key, ok := tok.(string)
		if !ok {
			return ms, errors.New("object key is not a string")
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return ms, fmt.Errorf("member %q: %v", key, err)
		}
		if seen.repeated(ms, key) {
			return ms, &DuplicateError{Key: key}
		}
		end := int(dec.InputOffset())
		ms = append(ms, Member{Key: key, Value: v, Start: end - len(v)})
	}
	if _, err := dec.Token(); err != nil {
		return ms, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return ms, errors.New("data after the object")
	}
	return ms, nil
}

// keySet finds a repeated key in linear time overall: small objects (nearly
// all) are scanned, and past a few members a set takes over, so that an
// object with a million keys costs a million lookups, not 10¹² comparisons.
type keySet struct {
	set map[string]struct{}
}

const keySetScan = 16

// repeated reports whether key is among ms (the keys before it), and
// remembers it for the next call.
func (k *keySet) repeated(ms MemberList, key string) bool {
	if len(ms) < keySetScan {
		_, dup := ms.Get(key)
		return dup
	}
	if k.set == nil {
		k.set = make(map[string]struct{}, 2*len(ms))
		for _, m := range ms {
			k.set[m.Key] = struct{}{}
		}
	}
	if _, dup := k.set[key]; dup {
		return true
	}
	k.set[key] = struct{}{}
	return false
}

// PrefixKeys reads what it can of an object that may be cut off or broken:
// every key seen, including the one whose value was cut, and the members
// read whole.
func PrefixKeys(prefix []byte) ([]string, MemberList) {
	dec := json.NewDecoder(bytes.NewReader(prefix))
	dec.UseNumber()
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, nil
	}
	var keys []string
	var ms MemberList
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			break
		}
		key, ok := tok.(string)
		if !ok {
			break
		}
		keys = append(keys, key)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			break
		}
		end := int(dec.InputOffset())
		ms = append(ms, Member{Key: key, Value: v, Start: end - len(v)})
	}
	return keys, ms
}

// Member is one key of a JSON object with its raw value.
type Member struct {
	Key   string
	Value json.RawMessage // exact bytes of the value
	Start int             // offset of Value within the object
}

// MemberList is the members of one object, in order.
type MemberList []Member

// Get returns the value of key, matched exactly.
func (ms MemberList) Get(key string) (json.RawMessage, bool) {
	for _, m := range ms {
		if m.Key == key {
			return m.Value, true
		}
	}
	return nil, false
}

// Replace returns obj, already split into ms, with the value of key
// replaced by value (added at the end when absent). The rest of obj is
// copied byte for byte: nothing is re-encoded.
func (ms MemberList) Replace(obj []byte, key string, value []byte) []byte {
	return ms.AppendReplaced(make([]byte, 0, len(obj)+len(value)), obj, key, value)
}

// ReplaceString is Replace with the string s as the new value, quoted in
// the result's own buffer rather than in one of its own first.
func (ms MemberList) ReplaceString(obj []byte, key, s string) []byte {
	dst := make([]byte, 0, len(obj)+len(s)+len(key)+4)
	for _, m := range ms {
		if m.Key == key {
			dst = append(dst, obj[:m.Start]...)
			dst = AppendString(dst, s)
			return append(dst, obj[m.Start+len(m.Value):]...)
		}
	}
	return ms.AppendReplaced(dst, obj, key, AppendString(nil, s))
}

// AppendReplaced appends obj, with the value of key replaced, to dst.
func (ms MemberList) AppendReplaced(dst, obj []byte, key string, value []byte) []byte {
	for _, m := range ms {
		if m.Key == key {
			dst = append(dst, obj[:m.Start]...)
			dst = append(dst, value...)
			return append(dst, obj[m.Start+len(m.Value):]...)
		}
	}
	end := bytes.LastIndexByte(obj, '}')
	dst = append(dst, obj[:end]...)
	if len(ms) > 0 {
		dst = append(dst, ',')
	}
	dst = AppendString(dst, key)
	dst = append(dst, ':')
	dst = append(dst, value...)
	return append(dst, obj[end:]...)
}

// AppendString appends s as a JSON string literal.
func AppendString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			q, _ := json.Marshal(s)
			return append(b, q...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

// DuplicateError is the error for an object that repeats a member: Key,
// unescaped, is the first one repeated. A reader that refuses such an
// object names the member (the peer reading the other copy is the risk).
type DuplicateError struct {
	Key string
}

func (e *DuplicateError) Error() string { return fmt.Sprintf("duplicate member %q", e.Key) }
