package rawjson

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"
)

// FuzzMembers checks the fast scanner against encoding/json's tokenizer:
// same keys, same values, same offsets, same verdict.
func FuzzMembers(f *testing.F) {
	for _, s := range []string{
		`{"a":1,"b":"x\"y","c":{"d":[1,{"e":"}"}]},"f":true,"g":null,"h":-1.5e3}`,
		` { "k\u0041" : [ ] , "z" : { } } `, `{}`, `{"a":1,"a":2}`, `{"a":`, `[1]`, `{"a":"\\"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		fast, ferr := Members(data)
		slow, serr := membersSlow(data)
		if (ferr == nil) != (serr == nil) {
			t.Fatalf("verdicts differ on %q: fast %v, slow %v", data, ferr, serr)
		}
		if ferr != nil {
			return
		}
		if len(fast) != len(slow) {
			t.Fatalf("%q: %d members, want %d", data, len(fast), len(slow))
		}
		for i := range fast {
			if fast[i].Key != slow[i].Key || !bytes.Equal(fast[i].Value, slow[i].Value) || fast[i].Start != slow[i].Start {
				t.Fatalf("%q member %d: fast %+v, slow %+v", data, i, fast[i], slow[i])
			}
			if !json.Valid(fast[i].Value) {
				t.Fatalf("%q member %d value %q is not JSON", data, i, fast[i].Value)
			}
		}
	})
}

// The duplicate-key check is linear: an object with a quarter of a million
// members (4 MiB) is split in well under a second, where a quadratic check
// takes minutes (and an hour at the 16 MiB message limit).
func TestMembersManyKeysLinear(t *testing.T) {
	var b strings.Builder
	b.WriteString("{")
	const n = 1 << 18
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `"k%d":1`, i)
	}
	b.WriteString("}")
	obj := []byte(b.String())
	done := make(chan struct{})
	go func() {
		defer close(done)
		ms, err := Members(obj)
		if err != nil || len(ms) != n {
			t.Errorf("Members = %d members, %v", len(ms), err)
		}
		dup := append(obj[:len(obj)-1:len(obj)-1], `,"k7":2}`...)
		if _, err := Members(dup); err == nil || !strings.Contains(err.Error(), `"k7"`) {
			t.Errorf("duplicate at the end: %v", err)
		}
		if _, err := membersSlow(dup); err == nil {
			t.Errorf("slow path missed the duplicate")
		}
	}()
	select {
	case <-done:
	case <-time.After(60 * time.Second): // generous: linear takes well under a second
		t.Fatal("splitting a 256k-member object takes minutes: the duplicate check is not linear")
	}
}

func BenchmarkMembersManyKeys(b *testing.B) {
	var sb strings.Builder
	sb.WriteString("{")
	for i := range 80000 {
		if i > 0 {
			sb.WriteByte(',')
		}
		fmt.Fprintf(&sb, `"key%d":1`, i)
	}
	sb.WriteString("}")
	obj := []byte(sb.String())
	b.SetBytes(int64(len(obj)))
	for b.Loop() {
		Members(obj)
	}
}

func TestReplace(t *testing.T) {
	tests := []struct{ obj, key, val, want string }{
		{`{"name":"a__b","arguments":{"name":"keep"}}`, "name", `"b"`, `{"name":"b","arguments":{"name":"keep"}}`},
		{`{ "x" : 1 , "name" : "old" }`, "name", `"new"`, `{ "x" : 1 , "name" : "new" }`},
		{`{"x":1}`, "name", `"n"`, `{"x":1,"name":"n"}`},
		{`{}`, "name", `"n"`, `{"name":"n"}`},
		{`{"n\u0061me":"esc"}`, "name", `"n"`, `{"n\u0061me":"n"}`},
	}
	for _, tt := range tests {
		ms, err := Members([]byte(tt.obj))
		got := ms.Replace([]byte(tt.obj), tt.key, []byte(tt.val))
		if err != nil || string(got) != tt.want {
			t.Errorf("Replace(%s, %s) = %s, %v; want %s", tt.obj, tt.key, got, err, tt.want)
		}
	}
}

// ReplaceString is Replace with the string quoted: the same bytes, for a
// member present or absent, and for strings that need escapes.
func TestReplaceStringIsReplace(t *testing.T) {
	for _, obj := range []string{`{"name":"a","arguments":{}}`, `{ "arguments" : {}, "name" : "x\u0041" }`, `{}`, `{"other":1}`} {
		for _, s := range []string{"tool", "", `q"u\o<te>&`, "é\u2028"} {
			ms, err := SplitValid([]byte(obj))
			if err != nil {
				t.Fatal(err)
			}
			quoted, _ := json.Marshal(s)
			want := ms.Replace([]byte(obj), "name", quoted)
			if got := ms.ReplaceString([]byte(obj), "name", s); string(got) != string(want) {
				t.Errorf("ReplaceString(%s, %q) = %s, want %s", obj, s, got, want)
			}
		}
	}
}
