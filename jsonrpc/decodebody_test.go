package jsonrpc

import (
	"reflect"
	"testing"
	"unsafe"
)

// FuzzDecodeBody holds DecodeBody to Decode's answers: the same message,
// the same error.
func FuzzDecodeBody(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a","arguments":{"x":[1,2]}}}`,
		`{"jsonrpc":"2.0","id":"s-1","method":"tools/call","params":{"name":"a","arguments":{},"_meta":{"progressToken":1},"extra":1,"more":2}}`,
		`{"jsonrpc":"2.0","id":7,"result":{"content":[]},"extra":true,"other":null}`,
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}`,
		`{"jsonrpc":"2.0","id":null,"method":"x"}`,
		`{"jsonrpc":"1.0","id":2,"method":"x"}`,
		`{"jsonrpc":"2.0","id":3,"method":"x","params":5}`,
		`[{"jsonrpc":"2.0","id":1,"method":"x"}]`,
		`{"jsonrpc":"2.0","id":1,"method":"x","params":{"a":`,
		` 5 `,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		want, wantErr := Decode(data)
		got, gotErr := DecodeBody(data)
		if (gotErr == nil) != (wantErr == nil) || gotErr != nil && gotErr.Error() != wantErr.Error() {
			t.Fatalf("%q: error %v, Decode's %v", data, gotErr, wantErr)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%q: message %+v, Decode's %+v", data, got, want)
		}
		if got != nil && len(got.ID.raw) > 0 && len(data) > 0 {
			id := unsafe.StringData(got.ID.raw)
			if start := uintptr(unsafe.Pointer(&data[0])); uintptr(unsafe.Pointer(id)) >= start && uintptr(unsafe.Pointer(id)) < start+uintptr(len(data)) {
				t.Fatalf("%q: the id views the body", data)
			}
		}
	})
}

// TestDecodeBodyAllocs: a usual request decoded from a body of its own
// is one allocation for the message and its splits, and one for its id.
func TestDecodeBodyAllocs(t *testing.T) {
	body := []byte(`{"jsonrpc":"2.0","id":12,"method":"tools/call","params":{"name":"a","arguments":{"x":[1,2]}}}`)
	n := testing.AllocsPerRun(100, func() { DecodeBody(body) })
	old := testing.AllocsPerRun(100, func() { Decode(body) })
	t.Logf("allocations: %.0f (Decode: %.0f)", n, old)
	if n > 2 {
		t.Errorf("DecodeBody of a tools/call takes %.0f allocations; want at most 2 (Decode takes %.0f)", n, old)
	}
}
