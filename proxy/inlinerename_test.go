package proxy

import (
	"bytes"
	"testing"

	"github.com/mcpgate/mcpgate/internal/rawjson"
)

// FuzzAppendRenamed pins the inline path's splice to ReplaceString, which
// the usual path uses, into a buffer that already holds an earlier call's
// params.
func FuzzAppendRenamed(f *testing.F) {
	f.Add([]byte(`{"name":"fake__echo","arguments":{"text":"hello"}}`), "echo")
	f.Add([]byte(`{ "arguments" : {"name":"x"}, "name" : "a\u005fb" }`), "é<&>\"\\\n")
	f.Add([]byte(`{"name":"x"}`), "")
	f.Fuzz(func(t *testing.T, params []byte, name string) {
		ms, err := rawjson.Members(params)
		if err != nil {
			return
		}
		if _, ok := ms.Get("name"); !ok {
			return
		}
		want := ms.ReplaceString(params, "name", name)
		earlier := []byte(`{"name":"an earlier call's params","arguments":{}}`)
		got := appendRenamed(earlier[:0], ms, params, name)
		if !bytes.Equal(got, want) {
			t.Fatalf("appendRenamed(%s, %q) = %s, want %s", params, name, got, want)
		}
	})
}
