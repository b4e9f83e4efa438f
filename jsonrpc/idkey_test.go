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

// encoding/json reads a lone surrogate escape ("\ud800") and a byte that
// is not UTF-8 as U+FFFD: distinct ids that read so must keep distinct
// keys, or one request is refused as another's duplicate, and a
// cancellation of one ends the other.
func TestIDKeyKeepsWhatJSONReadsAsReplacement(t *testing.T) {
	distinct := []string{`"\ud800"`, `"\udc00"`, `"\ufffd"`, "\"\xff\\n\"", "\"\xfe\\n\"", `"\ufffd\n"`}
	keys := map[string]string{}
	for _, raw := range distinct {
		id, err := ParseID(json.RawMessage(raw))
		if err != nil {
			t.Fatalf("ParseID(%q): %v", raw, err)
		}
		k := id.key().raw
		if other, ok := keys[k]; ok && other != raw {
			t.Errorf("ids %q and %q share the key %q", other, raw, k)
		}
		keys[k] = raw
	}
}

// An answer's id is keyed before it is looked up (see serveIn): for our
// calls' plain integer ids that must cost next to nothing, and no
// allocation.
func BenchmarkIDKeyPlainInteger(b *testing.B) {
	id := IntID(123456)
	b.ReportAllocs()
	for b.Loop() {
		if id.key() != id {
			b.Fatal("a plain integer is not its own key")
		}
	}
}

// SameValue, which the HTTP upstream link matches an answer on its
// stream with, agrees with the table of calls: one value however spelt,
// a string never a number.
func TestIDSameValue(t *testing.T) {
	for _, c := range []struct {
		a, b string
		same bool
	}{
		{`3`, `3`, true}, {`3`, `3.0`, true}, {`3`, `30e-1`, true}, {`"ab"`, `"a\u0062"`, true},
		{`3`, `"3"`, false}, {`3`, `4`, false}, {`"\ud800"`, `"\ufffd"`, false},
	} {
		a, b := ID{c.a}, ID{c.b}
		if a.SameValue(b) != c.same || b.SameValue(a) != c.same {
			t.Errorf("%s and %s: SameValue %v, want %v", c.a, c.b, a.SameValue(b), c.same)
		}
		if got := a.ValueKey() == b.ValueKey(); got != c.same {
			t.Errorf("%s and %s: same ValueKey %v, want %v", c.a, c.b, got, c.same)
		}
	}
	if id := IntID(7); id.ValueKey() != id {
		t.Error("our own id is not its own key")
	}
}
