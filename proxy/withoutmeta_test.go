package proxy

import (
	"bytes"
	"encoding/json"
	"slices"
	"testing"

	"github.com/mcpgate/mcpgate/internal/rawjson"
	"github.com/mcpgate/mcpgate/jsonrpc"
)

// withoutMetaReference is withoutMeta as it was before it split on the
// stack and wrote its result in one buffer: what the server gets must not
// change by a byte.
func withoutMetaReference(obj json.RawMessage, keys ...string) json.RawMessage {
	params := obj
	if !bytes.Contains(params, []byte(`"_meta"`)) && !bytes.Contains(params, []byte(`\u`)) {
		return params
	}
	ms, err := rawjson.SplitValid(params)
	if err != nil {
		return params
	}
	meta, ok := ms.Get("_meta")
	if !ok {
		return params
	}
	mm, err := rawjson.SplitValid(meta)
	if err != nil {
		return params
	}
	without := func(ms rawjson.MemberList, keys []string) json.RawMessage {
		out := []byte{'{'}
		for _, m := range ms {
			if slices.Contains(keys, m.Key) {
				continue
			}
			if len(out) > 1 {
				out = append(out, ',')
			}
			out = rawjson.AppendString(out, m.Key)
			out = append(out, ':')
			out = append(out, m.Value...)
		}
		return append(out, '}')
	}
	kept := without(mm, keys)
	if len(kept) == 2 {
		return without(ms, []string{"_meta"})
	}
	return ms.Replace(params, "_meta", kept)
}

// FuzzWithoutEnvelope pins withoutMeta, which takes a modern request's
// envelope out for a legacy server, to the reference above; and
// withoutMetaIn too, given a buffer holding another call's params (an
// inline call's, reused), and withoutEnvelopeOf, which takes the params'
// split and the envelope's word for what _meta held.
func FuzzWithoutEnvelope(f *testing.F) {
	for _, seed := range []string{
		`{"name":"hello","arguments":{"text":"hi"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}`,
		`{"name":"a", "_meta" : {"progressToken":7, "io.modelcontextprotocol/protocolVersion":"2026-07-28"} , "x":[1,2]}`,
		`{"\u005fmeta":{"io.modelcontextprotocol\/protocolVersion":"2026-07-28","k<":1},"b":2}`,
		`{"_meta":{},"_meta":{"progressToken":"t"}}`,
		`{"_meta":"no object"}`,
		`{"a":1}`,
		`{"name":"t","arguments":{"x":[1]},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"c","version":"1"},"io.modelcontextprotocol/logLevel":"info"}}`,
		`{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}},"name":"t","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"k":1}}`,
		`{"name":"t","_meta":{"io.modelcontextprotocol\/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}`,
		`{"_meta":{"a":1,"b":2,"c":3,"d":4,"e":5,"f":6,"g":7,"h":8,"i":9,"j":10,"k":11,"l":12,"m":13,"n":14,"o":15,"p":16,"q":17,"progressToken":1}}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, params []byte) {
		if !json.Valid(params) {
			return // requests come decoded: their params are valid JSON
		}
		for _, keys := range [][]string{envelopeKeys, {"progressToken"}} {
			want := withoutMetaReference(bytes.Clone(params), keys...)
			got := withoutMeta(bytes.Clone(params), keys...)
			if !bytes.Equal(got, want) {
				t.Fatalf("withoutMeta(%s, %q) = %s, want %s", params, keys, got, want)
			}
			dirty := append(make([]byte, 0, len(params)+8), `{"name":"another call","_meta":{}}`...)
			if got := withoutMetaIn(dirty, bytes.Clone(params), keys...); !bytes.Equal(got, want) {
				t.Fatalf("withoutMetaIn(buffer in use, %s, %q) = %s, want %s", params, keys, got, want)
			}
		}
		msg, err := jsonrpc.Decode([]byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":` + string(params) + `}`))
		if err != nil {
			return
		}
		env, _ := readEnvelope(msg)
		want := bytes.Clone(msg.Params) // as decoded: without the space around
		if mayHoldEnvelope(want) {
			want = withoutMetaReference(want, envelopeKeys...)
		}
		dirty := append(make([]byte, 0, len(params)+8), `{"name":"another call","_meta":{}}`...)
		if got := withoutEnvelopeOf(dirty, msg.Params, msg, env, ""); !bytes.Equal(got, want) {
			t.Fatalf("withoutEnvelopeOf(%s) = %s, want %s", msg.Params, got, want)
		}
		// Renamed as an inline call renames them (appendRenamed), from the
		// split its name was read in.
		ms, ok := msg.ParamMembers()
		if _, named := ms.Get("name"); !ok || !named {
			return
		}
		renamed := appendRenamed(nil, ms, msg.Params, "upstream \"name\"")
		want = renamed
		if mayHoldEnvelope(renamed) {
			want = withoutMetaReference(bytes.Clone(renamed), envelopeKeys...)
		}
		if got := withoutEnvelopeOf(dirty, renamed, msg, env, "upstream \"name\""); !bytes.Equal(got, want) {
			t.Fatalf("withoutEnvelopeOf(%s renamed) = %s, want %s", msg.Params, got, want)
		}
	})
}
