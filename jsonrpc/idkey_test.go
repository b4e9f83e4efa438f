package jsonrpc

import (
	"encoding/json"
	"testing"
)

// Two spellings of one id value are one key; different values never are.
func TestIDKeyIsTheValue(t *testing.T) {
	same := [][]string{
		{`"ab"`, `"a\u0062"`, `"\u0061\u0062"`},
		{`"a/b"`, `"a\/b"`},
		{`"a\"b"`, `"a\u0022b"`},
		{`100`, `1e2`, `1E+2`, `100.0`, `10e1`, `1000e-1`},
		{`0`, `-0`, `0.0`, `0e5`},
		{`-7`, `-7.00`, `-0.7e1`},
		{`1.5`, `15e-1`, `0.15e1`},
	}
	var keys []string
	for _, group := range same {
		var k string
		for _, raw := range group {
			id, err := ParseID(json.RawMessage(raw))
			if err != nil {
				t.Fatalf("ParseID(%s): %v", raw, err)
			}
			got := id.key().raw
			if k == "" {
				k = got
			} else if got != k {
				t.Errorf("key(%s) = %q, key(%s) = %q; want one key", group[0], k, raw, got)
			}
		}
		keys = append(keys, k)
	}
	for i := range keys {
		for j := i + 1; j < len(keys); j++ {
			if keys[i] == keys[j] {
				t.Errorf("%s and %s share the key %q", same[i][0], same[j][0], keys[i])
			}
		}
	}
	for _, raw := range []string{`"1"`, `"100"`, `"~0.15e1"`} { // a string is never a number's key
		id, _ := ParseID(json.RawMessage(raw))
		for _, k := range keys[3:] {
			if id.key().raw == k {
				t.Errorf("string %s has a number's key %q", raw, k)
			}
		}
	}
}

// A call's id viewing its own digits reads as IntID's, for every width.
func TestCallIntID(t *testing.T) {
	for _, n := range []int64{0, 1, 9, 10, 123456789, 1<<63 - 1} {
		var call Call
		call.setIntID(n)
		if call.id != IntID(n) || call.id.key() != IntID(n) {
			t.Errorf("setIntID(%d) = %q, want %q", n, call.id.raw, IntID(n).raw)
		}
	}
}

// Ids that differ only where decoding loses what they hold (lone
// surrogates, bytes that are not UTF-8: each decodes to U+FFFD) are
// different ids, not one: a client that numbers requests "\ud800",
// "\ud801" had the second refused as already in flight.
func TestIDKeyKeepsWhatDecodingLoses(t *testing.T) {
	raws := []string{`"\ud800"`, `"\ud801"`, `"\udc00"`, "\"\xff\\u0061\"", "\"\xfe\\u0061\"", `"\ufffda"`}
	seen := map[ID]string{}
	for _, raw := range raws {
		id, err := ParseID(json.RawMessage(raw))
		if err != nil {
			t.Fatalf("ParseID(%s): %v", raw, err)
		}
		if other, ok := seen[id.key()]; ok {
			t.Errorf("%s and %s share the key %q", other, raw, id.key().raw)
		}
		seen[id.key()] = raw
	}
}
