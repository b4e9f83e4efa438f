package rawjson

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// feedInPieces feeds data to a fresh Incremental cut where cuts says (each
// byte of cuts is the length of the next piece, 0 meaning 1), then
// finishes it.
func feedInPieces(data, cuts []byte) (*Incremental, []byte, memoEntry, bool) {
	var s Incremental
	s.Reset()
	n := 0
	for _, c := range cuts {
		n += max(int(c), 1)
		if n >= len(data) {
			break
		}
		s.Feed(data[:n])
	}
	msg, e, ok := s.finish(data)
	return &s, msg, e, ok
}

// FuzzIncremental checks the scanner fed in pieces against the one-pass
// scanner given the whole (itself checked against json.Valid): it accepts
// only what that accepts, splits the same, gives up on valid input only
// where it says it may, and never misses a member named "uri".
func FuzzIncremental(f *testing.F) {
	for _, s := range scanSeeds {
		f.Add([]byte(s), []byte{1, 2, 3})
		f.Add([]byte(s), []byte{7})
	}
	f.Add([]byte(`{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"`+strings.Repeat("ab\\\"\\u00e9 ", 20)+`"}],"isError":true}}`), []byte{5, 9, 1, 1, 30})
	f.Add([]byte(`{"result":{"content":[{"type":"resource_link","uri":"file:///x"}]}}`), []byte{3})
	f.Add([]byte(`{"result":{"a":{"u\u0072i":1}}}`), []byte{20})
	f.Add([]byte(`{"a":[-12.5e+10,true,false,null,0]}`), []byte{1})
	// Long strings, scanned words at a time: what stops the scan, at every
	// place in a word.
	for _, stop := range []string{"\x01", "\x1f", `\"`, `\u00e9`, "\xff", `"`, "\x7f"} {
		for at := 30; at < 80; at += 7 {
			f.Add([]byte(`{"a":"`+strings.Repeat("x", at)+stop+strings.Repeat("y", 70)+`"}`), []byte{64, 13})
		}
	}
	// A key's colon taken with it, or not there, at every cut; a quote,
	// 0x20 to 0x23 and the bytes of the high half where a word's test
	// folds them with control bytes.
	for _, seed := range []string{`{"a" "b"}`, `{"a"`, `{"a":"}`, `{"a"  :1,"b":{"c""d"}}`, `{"a":"` + "\x20\x21\x23\x7f\x80\xa2\xff\xc2\xa0" + `"}`,
		`{"a":"` + "0123456\x1f" + `"}`, `{"a":"` + "01234567\x22" + `}`, `{"result":{"tools":[{"a":1,"a":2}]}}`, `{"result":{"tools":[{"a":1},{"b":2,"b":3}]}}`} {
		f.Add([]byte(seed), []byte{1})
		f.Add([]byte(seed), []byte{4, 1, 1})
	}
	f.Fuzz(func(t *testing.T, data, cuts []byte) {
		s, msg, e, ok := feedInPieces(data, cuts)
		trimmed := bytes.TrimSpace(data)
		ms, inner, err := splitValidating(trimmed, "params")
		if !ok {
			if _, _, err := splitValidating(data, ""); err == nil && bytes.IndexByte(data, '\\') < 0 && !longNumber(data) {
				t.Fatalf("%q cut %v: gave up on valid input", data, cuts)
			}
			return
		}
		if !json.Valid(data) || err != nil {
			t.Fatalf("%q cut %v: accepted; json.Valid %v, splitValidating %v", data, cuts, json.Valid(data), err)
		}
		if !bytes.Equal(msg, trimmed) {
			t.Fatalf("%q: message %q, want %q", data, msg, trimmed)
		}
		if got := memberList(msg, e.members); !sameMembers(got, ms) {
			t.Fatalf("%q: members %+v, want %+v", data, got, ms)
		}
		if e.innerKey != "" {
			v, _ := ms.Get(e.innerKey)
			want, werr := SplitValid(v)
			_, _, dupInside := splitValidating(v, "")
			if werr != nil || dupInside != nil {
				t.Fatalf("%q: split %s though it is not one object: %v %v", data, e.innerKey, werr, dupInside)
			}
			if got := memberList(v, e.inner); !sameMembers(got, want) {
				t.Fatalf("%q: %s members %+v, want %+v", data, e.innerKey, got, want)
			}
			if e.innerKey == "params" && !sameMembers(memberList(v, e.inner), inner) {
				t.Fatalf("%q: params members differ from splitValidating's", data)
			}
		} else if p, found := ms.Get("params"); found && p[0] == '{' && inner != nil {
			t.Fatalf("%q: params not split", data)
		}
		if !e.uriKey && hasKey(msg, "uri") {
			t.Fatalf("%q: a member named uri went unnoticed", data)
		}
		_ = s
	})
}

func sameMembers(a, b MemberList) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Key != b[i].Key || !bytes.Equal(a[i].Value, b[i].Value) || a[i].Start != b[i].Start {
			return false
		}
	}
	return true
}

// longNumber reports whether data has a run of number characters longer
// than maxPending (where the scanner may give up).
func longNumber(data []byte) bool {
	run := 0
	for _, c := range data {
		if c >= '0' && c <= '9' || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E' {
			if run++; run > maxPending/2 {
				return true
			}
		} else {
			run = 0
		}
	}
	return false
}

// hasKey reports whether valid JSON v has a member named key at any depth.
func hasKey(v []byte, key string) bool {
	var x any
	json.Unmarshal(v, &x)
	var walk func(any) bool
	walk = func(x any) bool {
		switch x := x.(type) {
		case map[string]any:
			for k, v := range x {
				if k == key || walk(v) {
					return true
				}
			}
		case []any:
			for _, v := range x {
				if walk(v) {
					return true
				}
			}
		}
		return false
	}
	return walk(x)
}

// TestIncrementalDepth: the nesting limit is json.Valid's, however the
// input is cut.
func TestIncrementalDepth(t *testing.T) {
	for _, depth := range []int{maxDepth - 1, maxDepth} {
		data := []byte(`{"a":` + strings.Repeat("[", depth) + strings.Repeat("]", depth) + `}`)
		_, _, _, ok := feedInPieces(data, bytes.Repeat([]byte{100}, len(data)/100))
		if ok != json.Valid(data) {
			t.Errorf("depth %d: accepted %v, json.Valid %v", depth, ok, json.Valid(data))
		}
	}
}

// TestIncrementalRemembered: a big message scanned as it arrived is split
// from memory, not scanned again, and so is its result; a copy of it (the
// same bytes elsewhere) is not found.
func TestIncrementalRemembered(t *testing.T) {
	emptyMemo(t)
	text := strings.Repeat("x", 200<<10)
	data := []byte(`{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"` + text + `"}],"isError":true}}`)
	var s Incremental
	s.Reset()
	for n := 1000; n < len(data); n += 64 << 10 {
		s.Feed(data[:n])
	}
	if !s.Finish(data) {
		t.Fatal("Finish: false for a valid message")
	}
	if _, ok := recall(data); !ok {
		t.Fatal("the message is not remembered")
	}
	ms, _, err := MembersNested(data, "params")
	if err != nil {
		t.Fatal(err)
	}
	res, _ := ms.Get("result")
	if e, ok := recall(res); !ok || e.uriKey {
		t.Fatalf("the result: remembered %v, uriKey %v", ok, e.uriKey)
	}
	rm, err := SplitValid(res)
	if v, _ := rm.Get("isError"); err != nil || string(v) != "true" {
		t.Fatalf("SplitValid(result): isError %s, %v", v, err)
	}
	if !NoURIKey(res) {
		t.Error("NoURIKey(result) = false for a result without uri")
	}
	if _, ok := recall(bytes.Clone(data)); ok {
		t.Error("a copy of the message was found in the memo")
	}
	if NoURIKey(bytes.Clone(res)) {
		t.Error("NoURIKey of an unknown value is true")
	}
}

// BenchmarkStringRest: the scan of a long string, the bulk of a big
// result (a tool's text), as Incremental makes it.
func BenchmarkStringRest(b *testing.B) {
	s := []byte(strings.Repeat("The quick brown fox jumps over the lazy dog. ", 1<<16) + `"`)
	b.SetBytes(int64(len(s)))
	for b.Loop() {
		if end, more, _ := stringRest(s, 0); end != len(s) || more {
			b.Fatal(end, more)
		}
	}
}
