package rawjson

import (
	"reflect"
	"strings"
	"testing"
)

// SplitValidInto splits as SplitValid does, whatever it is given, and in
// the array it is given when the members fit.
func TestSplitValidIntoIsSplitValid(t *testing.T) {
	many := "{" // more members than the array has room for
	for i := range 12 {
		if i > 0 {
			many += ","
		}
		many += `"k` + string(rune('a'+i)) + `":[` + strings.Repeat("1,", i) + `0]`
	}
	many += "}"
	for _, obj := range []string{
		`{}`, ` { "a" : 1 , "b":{"c":[1,"x"]} } `, `{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}`,
		many, `{"a\u005f":1}`, `{"a":1,"a":2}`, `[1]`, `"x"`, ``, `{"a":`, `{"a" 1}`,
	} {
		want, wantErr := SplitValid([]byte(obj))
		var into [8]Member
		got, err := SplitValidInto(into[:], []byte(obj))
		if (err == nil) != (wantErr == nil) || !reflect.DeepEqual(got, want) && (len(got) != 0 || len(want) != 0) {
			t.Errorf("SplitValidInto(%s) = %v, %v; SplitValid: %v, %v", obj, got, err, want, wantErr)
		}
		if err == nil && len(got) > 0 && len(got) <= len(into) && &got[0] != &into[0] {
			t.Errorf("SplitValidInto(%s) did not use the array it was given", obj)
		}
	}
}

// Into an array of the caller's stack, a split allocates nothing.
func TestSplitValidIntoAllocatesNothing(t *testing.T) {
	obj := []byte(`{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"progressToken":7}`)
	allocs := testing.AllocsPerRun(100, func() {
		var into [8]Member
		ms, err := SplitValidInto(into[:], obj)
		if err != nil || len(ms) != 3 {
			t.Fatal(len(ms), err)
		}
	})
	if allocs != 0 {
		t.Errorf("a split into the caller's array takes %.0f allocations, want 0", allocs)
	}
}
