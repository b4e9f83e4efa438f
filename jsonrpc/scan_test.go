package jsonrpc

import (
	"bytes"
	"encoding/json"
	"testing"
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
