package proxy

import (
	"encoding/json"
	"reflect"
	"slices"
	"testing"

	"github.com/mcpgate/mcpgate/internal/rawjson"
	"github.com/mcpgate/mcpgate/jsonrpc"
)

// readEnvelopeSlow is readEnvelope as it read everything with
// encoding/json: the fast readers must give the same envelope and error.
func readEnvelopeSlow(msg *jsonrpc.Message) (*envelope, error) {
	if !mayHoldEnvelope(msg.Params) {
		return nil, nil
	}
	ms, ok := msg.ParamMembers()
	if !ok {
		var err error
		if ms, err = rawjson.SplitValid(msg.Params); err != nil {
			return nil, nil
		}
	}
	metaRaw, ok := ms.Get("_meta")
	if !ok {
		return nil, nil
	}
	meta, err := rawjson.SplitValid(metaRaw)
	if err != nil {
		if rawjson.MayHoldKey(metaRaw, metaKeyPrefix) { // an envelope with a member repeated
			return nil, jsonrpc.Errorf(jsonrpc.ErrInvalidParams, "params._meta: %v", err)
		}
		return nil, nil
	}
	rawVersion, ok := meta.Get(metaProtocolVersion)
	if !ok {
		return nil, nil
	}
	env := &envelope{metaIsEnvelope: keptMembers(meta, envelopeKeys) == 0}
	if json.Unmarshal(rawVersion, &env.version) != nil {
		return nil, jsonrpc.Errorf(jsonrpc.ErrInvalidParams, "invalid _meta field %q: a protocol version is a string", metaProtocolVersion)
	}
	if !slices.Contains(modernVersions, env.version) {
		return nil, unsupportedVersion(env.version)
	}
	rawCaps, ok := meta.Get(metaClientCaps)
	if !ok || json.Unmarshal(rawCaps, &env.caps) != nil || env.caps == nil {
		return nil, jsonrpc.Errorf(jsonrpc.ErrInvalidParams, "missing or invalid _meta field %q: every request of protocol %s declares the client's capabilities (an object; {} for none)", metaClientCaps, env.version)
	}
	if raw, ok := meta.Get(metaClientInfo); ok {
		json.Unmarshal(raw, &env.client)
	}
	if raw, ok := meta.Get(metaLogLevel); ok {
		if json.Unmarshal(raw, &env.logLevel) != nil || logRank(env.logLevel) < 0 {
			return nil, jsonrpc.Errorf(jsonrpc.ErrInvalidParams, "invalid _meta field %q: a log level is one of debug, info, notice, warning, error, critical, alert, emergency", metaLogLevel)
		}
	}
	return env, nil
}

// FuzzReadEnvelope holds readEnvelope's readers of the usual shapes to
// encoding/json's answers on any params.
func FuzzReadEnvelope(f *testing.F) {
	for _, meta := range []string{
		`"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}`,
		`"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"sampling":{},"roots":{"listChanged":true},"sampling":{"x":1}},"io.modelcontextprotocol/clientInfo":{"name":"c","version":"1.0","title":"T"}`,
		`"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"\u0072oots":{}},"io.modelcontextprotocol/clientInfo":{"NAME":"upper","name":"lower"}`,
		`"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"caf\u00e9","verſion":"2"},"io.modelcontextprotocol/logLevel":"info"`,
		`"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":7,"version":"1"}`,
		`"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":null`,
		`"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":[]`,
		`"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/logLevel":"loud"`,
		`"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/logLevel":null`,
		`"io.modelcontextprotocol/protocolVersion":"2026-07-2\u0038","io.modelcontextprotocol/clientCapabilities":{}`,
		`"io.modelcontextprotocol/protocolVersion":null,"io.modelcontextprotocol/clientCapabilities":{}`,
		`"io.modelcontextprotocol/protocolVersion":"2025-11-25"`,
		`"io.modelcontextprotocol/protocolVersion":5`,
		`"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":"x"`,
		`"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientCapabilities":{"sampling":{}}`,
		`"progressToken":1,"progressToken":2`,
	} {
		f.Add(`{"name":"t","arguments":{},"_meta":{` + meta + `}}`)
	}
	f.Fuzz(func(t *testing.T, params string) {
		msg, err := jsonrpc.Decode([]byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":` + params + `}`))
		if err != nil || !json.Valid([]byte(params)) {
			return
		}
		got, gotErr := readEnvelope(msg)
		want, wantErr := readEnvelopeSlow(msg)
		if (gotErr == nil) != (wantErr == nil) || gotErr != nil && gotErr.Error() != wantErr.Error() {
			t.Fatalf("params %s: error %v, encoding/json's %v", params, gotErr, wantErr)
		}
		if gotErr == nil && !reflect.DeepEqual(got, want) {
			t.Fatalf("params %s: envelope %+v, encoding/json's %+v", params, got, want)
		}
	})
}

// TestReadEnvelopeAllocs: a usual envelope is read with a few allocations
// (the envelope, the capabilities' map and their copy, the client's
// strings), not encoding/json's dozen.
func TestReadEnvelopeAllocs(t *testing.T) {
	msg, err := jsonrpc.Decode([]byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","arguments":{},"_meta":{` +
		`"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"sampling":{}},` +
		`"io.modelcontextprotocol/clientInfo":{"name":"c","version":"1"}}}}`))
	if err != nil {
		t.Fatal(err)
	}
	fast := testing.AllocsPerRun(100, func() { readEnvelope(msg) })
	slow := testing.AllocsPerRun(100, func() { readEnvelopeSlow(msg) })
	t.Logf("allocations per envelope: %.0f (encoding/json: %.0f)", fast, slow)
	if fast > 6 {
		t.Errorf("reading an envelope takes %.0f allocations; want at most 6 (encoding/json's readers take %.0f)", fast, slow)
	}
}

// TestEnvelopeOfCheckedRequest: the session serving a request the
// transport checked takes its envelope from the check, for the request
// itself and for a copy of its message (jsonrpc copies it), and reads any
// other message's own.
func TestEnvelopeOfCheckedRequest(t *testing.T) {
	decode := func(client string) *jsonrpc.Message {
		msg, err := jsonrpc.Decode([]byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","_meta":{` +
			`"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},` +
			`"io.modelcontextprotocol/clientInfo":{"name":"` + client + `","version":"1"}}}}`))
		if err != nil {
			t.Fatal(err)
		}
		return msg
	}
	msg := decode("checked")
	checked, werr := CheckModernRequest(msg)
	if werr != nil || checked == nil {
		t.Fatalf("CheckModernRequest: %v, %v", checked, werr)
	}
	s := &session{checked: checked}
	copied := *msg
	for _, m := range []*jsonrpc.Message{msg, &copied} {
		if env, err := s.envelopeOf(m); err != nil || env != checked.env {
			t.Errorf("envelopeOf the checked request: %+v, %v; want the check's", env, err)
		}
	}
	other := decode("other")
	if env, err := s.envelopeOf(other); err != nil || env == checked.env || env.client.Name != "other" {
		t.Errorf("envelopeOf another request: %+v, %v; want its own", env, err)
	}
}
