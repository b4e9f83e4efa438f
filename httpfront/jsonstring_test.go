package httpfront

import (
	"bytes"
	"encoding/json"
	"testing"
)

// jsonString reads a valid value as json.Unmarshal into a string does.
func FuzzJSONString(f *testing.F) {
	for _, s := range []string{`"2026-07-28"`, `"a\u0062"`, `"\ud800"`, "\"\xff\"", `null`, `12`, `true`, `{}`, `[]`, `""`, ``} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, value []byte) {
		if len(value) == 0 { // a member that is not there
			if _, ok := jsonString(value); ok {
				t.Fatal("jsonString of no value: ok")
			}
			return
		}
		if !json.Valid(value) || len(bytes.TrimSpace(value)) != len(value) {
			return // callers pass a value's exact bytes, from a valid message
		}
		var want string
		wantOK := json.Unmarshal(value, &want) == nil
		got, ok := jsonString(value)
		if got != want || ok != wantOK {
			t.Fatalf("jsonString(%s) = %q, %v; json.Unmarshal: %q, %v", value, got, ok, want, wantOK)
		}
	})
}
