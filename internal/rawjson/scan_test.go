package rawjson

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

var scanSeeds = []string{
	`{"a":1,"b":"x\"y","c":{"d":[1,{"e":"}"}]},"f":true,"g":null,"h":-1.5e3}`,
	` { "k\u0041" : [ ] , "z" : { } } `, `{}`, `{"a":1,"a":2}`, `{"a":`, `[1]`, `{"a":"\\"}`,
	`{"a":01}`, `{"a":-}`, `{"a":1.}`, `{"a":.5}`, `{"a":1e}`, `{"a":1E+2}`, `{"a":-0.0e-0}`,
	`{"a":tru}`, `{"a":nulll}`, `{"a":"\x01"}`, "{\"a\":\"\xff\xfe\"}", `{"a":"\u12G4"}`, `{"a":"\q"}`,
	`{"a":[1,]}`, `{"a":{"b":1,}}`, `{,}`, `{"a" 1}`, `{"a":1}x`, `{"a":1} `, `{"a":[[[[]]]]}`,
	`{"a":"0123456789abcdef0123456789\"abcdef"}`, `{"abcdefghij":"\t"}`, `{"a":"é€😀"}`,
	`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":{}}}`,
	`{"params":{"a":1,"a":2}}`, `{"params":[1]}`, `{"params":{}}`,
}

// FuzzScanner checks the one-pass validating scanner against json.Valid
// and against the split it replaced (json.Valid first, then splitObject):
// same verdict, same members.
func FuzzScanner(f *testing.F) {
	for _, s := range scanSeeds {
		f.Add([]byte(s))
	}
	f.Add([]byte(`{"a":` + strings.Repeat("[", maxDepth-1) + strings.Repeat("]", maxDepth-1) + `}`))
	f.Add([]byte(`{"a":` + strings.Repeat("[", maxDepth) + strings.Repeat("]", maxDepth) + `}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		// Any value, against json.Valid.
		end, err := scanValue(data, skipSpace(data, 0), 0)
		valid := err == nil && skipSpace(data, end) == len(data)
		if valid != json.Valid(data) {
			t.Fatalf("scanValue(%q) valid = %v, json.Valid says %v", data, valid, !valid)
		}
		// Objects, against the former split.
		ms, inner, err := splitValidating(data, "params")
		trimmed := bytes.TrimSpace(data)
		var old MemberList
		oldErr := errInvalid
		if json.Valid(data) && len(trimmed) > 0 && trimmed[0] == '{' {
			old, oldErr = splitObjectInto(nil, data, skipSpace(data, 0))
		}
		if (err == nil) != (oldErr == nil) {
			t.Fatalf("%q: scanner says %v, json.Valid and split say %v", data, err, oldErr)
		}
		if err != nil {
			return
		}
		if len(ms) != len(old) {
			t.Fatalf("%q: %d members, want %d", data, len(ms), len(old))
		}
		for i := range ms {
			if ms[i].Key != old[i].Key || !bytes.Equal(ms[i].Value, old[i].Value) || ms[i].Start != old[i].Start {
				t.Fatalf("%q member %d: %+v, want %+v", data, i, ms[i], old[i])
			}
		}
		params, ok := old.Get("params")
		if _, dupInside := SplitValid(params); !ok || params[0] != '{' || dupInside != nil {
			if inner != nil {
				t.Fatalf("%q: params split though not an object", data)
			}
			return
		}
		want, werr := SplitValid(params)
		if werr != nil || len(inner) != len(want) {
			t.Fatalf("%q: params split into %d members, want %d (%v)", data, len(inner), len(want), werr)
		}
		for i := range inner {
			if inner[i].Key != want[i].Key || !bytes.Equal(inner[i].Value, want[i].Value) || inner[i].Start != want[i].Start {
				t.Fatalf("%q params member %d: %+v, want %+v", data, i, inner[i], want[i])
			}
		}
	})
}

// A typical request is validated and split, params included, with one
// allocation per object split: no string per key, no second pass.
func TestMembersAllocations(t *testing.T) {
	msg := []byte(`{"jsonrpc":"2.0","id":17,"method":"tools/call","params":{"name":"fake__echo","arguments":{"text":"hello","n":42,"nested":{"list":[1,2,3]}},"_meta":{"progressToken":"p1"}}}`)
	allocs := testing.AllocsPerRun(100, func() {
		ms, inner, err := MembersNested(msg, "params")
		if err != nil || len(ms) != 4 || len(inner) != 3 {
			t.Fatalf("MembersNested = %v, %v, %v", ms, inner, err)
		}
	})
	if allocs > 2 {
		t.Errorf("splitting a request and its params takes %v allocations, want at most 2 (one member list each)", allocs)
	}
}

// Nesting as deep as encoding/json allows is validated without recursion,
// one level more is refused, as json.Valid refuses it.
func TestScanDepth(t *testing.T) {
	deep := func(n int) []byte {
		return []byte(`{"a":` + strings.Repeat("[", n-1) + strings.Repeat("]", n-1) + `}`)
	}
	if _, _, err := splitValidating(deep(maxDepth), ""); err != nil {
		t.Errorf("nesting %d: %v", maxDepth, err)
	}
	if _, _, err := splitValidating(deep(maxDepth+1), ""); err == nil {
		t.Errorf("nesting %d accepted; json.Valid refuses it", maxDepth+1)
	}
}

func BenchmarkMembersRequest(b *testing.B) {
	msg := []byte(`{"jsonrpc":"2.0","id":17,"method":"tools/call","params":{"name":"fake__echo","arguments":{"text":"hello","n":42,"nested":{"list":[1,2,3]}}}}`)
	b.ReportAllocs()
	for b.Loop() {
		MembersNested(msg, "params")
	}
}

func BenchmarkMembersBigString(b *testing.B) {
	msg := []byte(`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"` + strings.Repeat("x", 10<<20) + `"}]}}`)
	b.SetBytes(int64(len(msg)))
	for b.Loop() {
		Members(msg)
	}
}

// BenchmarkMembersAnswer: the envelope of a small tool answer, the other
// message of every relayed call.
func BenchmarkMembersAnswer(b *testing.B) {
	msg := []byte(`{"jsonrpc":"2.0","id":17,"result":{"content":[{"type":"text","text":"ok"}],"isError":false}}`)
	into := make(MemberList, 0, 8)
	for b.Loop() {
		MembersNestedIntoBoth(into, nil, msg, "")
	}
}
