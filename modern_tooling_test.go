package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/mcpgate/mcpgate/jsonrpc"
)

// Unit tests of the pure parts of the modern-era tooling; the scripts
// tooling_modern_*.txtar test the programs.

// The encoding table of the spec's Streamable HTTP page (spec2026.md §6.6).
func TestHeaderValueEncoding(t *testing.T) {
	for _, tc := range []struct{ value, header string }{
		{"us-west1", "us-west1"},
		{"", ""},
		{"Hello, 世界", "=?base64?SGVsbG8sIOS4lueVjA==?="},
		{" padded ", "=?base64?IHBhZGRlZCA=?="},
		{"=?base64?literal?=", "=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?="},
		{"tab\there", "=?base64?dGFiCWhlcmU=?="},
	} {
		if got := encodeHeaderValue(tc.value); got != tc.header {
			t.Errorf("encodeHeaderValue(%q) = %q, want %q", tc.value, got, tc.header)
		}
		if got, ok := decodeHeaderValue(" " + tc.header + "\t"); !ok || got != tc.value {
			t.Errorf("decodeHeaderValue(%q) = %q, %v; want %q, true", tc.header, got, ok, tc.value)
		}
	}
	if _, ok := decodeHeaderValue("=?base64?not base64!?="); ok {
		t.Error("decodeHeaderValue accepted a bad encoding")
	}
}

func TestHeaderParams(t *testing.T) {
	schema := json.RawMessage(`{"type":"object","properties":{
		"region":{"type":"string","x-mcp-header":"Region"},
		"opts":{"type":"object","properties":{"dry":{"type":"boolean","x-mcp-header":"Dry"}}},
		"list":{"type":"array","items":{"type":"object","properties":{"x":{"type":"string","x-mcp-header":"X"}}}},
		"plain":{"type":"number"}}}`)
	want := []headerParam{{path: []string{"opts", "dry"}, name: "Dry"}, {path: []string{"region"}, name: "Region"}}
	if got := headerParams(schema); !reflect.DeepEqual(got, want) {
		t.Errorf("headerParams = %v, want %v (nothing reached through items)", got, want)
	}
	args := json.RawMessage(`{"region":" padded ","opts":{"dry":false},"n":null}`)
	for _, tc := range []struct {
		path   []string
		header string
		ok     bool
	}{
		{[]string{"region"}, "=?base64?IHBhZGRlZCA=?=", true},
		{[]string{"opts", "dry"}, "false", true},
		{[]string{"n"}, "", false},
		{[]string{"missing"}, "", false},
	} {
		got, ok := paramHeaderValue(argumentAt(args, tc.path))
		if got != tc.header || ok != tc.ok {
			t.Errorf("argument %v: header %q, %v; want %q, %v", tc.path, got, ok, tc.header, tc.ok)
		}
	}
	for _, tc := range []struct {
		header, body string
		match        bool
	}{
		{"42", "42.0", true},
		{" 42 ", "42", true},
		{"43", "42", false},
		{"true", "true", true},
		{"=?base64?IHBhZGRlZCA=?=", `" padded "`, true},
		{"padded", `" padded "`, false},
	} {
		if got := paramHeaderMatches(tc.header, json.RawMessage(tc.body)); got != tc.match {
			t.Errorf("paramHeaderMatches(%q, %s) = %v, want %v", tc.header, tc.body, got, tc.match)
		}
	}
}

// A modern send merges the envelope into params._meta; what the script
// wrote wins; notifications and send-raw go as written.
func TestPrepareEnvelope(t *testing.T) {
	c := &client{sent: map[string]map[string]json.RawMessage{}, answers: map[string]json.RawMessage{}}
	c.modern, _ = parseModern(`2026-07-28 {"sampling":{}}`)
	for _, tc := range []struct {
		msg  string
		raw  bool
		want string
	}{
		{`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, false,
			`{"id":1,"jsonrpc":"2.0","method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/clientCapabilities":{"sampling":{}},"io.modelcontextprotocol/clientInfo":{"name":"mcpclient","version":"1"},"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`},
		{`{"jsonrpc":"2.0","id":2,"method":"x","params":{"a":"<b>","_meta":{"io.modelcontextprotocol/protocolVersion":"v9","progressToken":1}}}`, false,
			`{"id":2,"jsonrpc":"2.0","method":"x","params":{"_meta":{"io.modelcontextprotocol/clientCapabilities":{"sampling":{}},"io.modelcontextprotocol/clientInfo":{"name":"mcpclient","version":"1"},"io.modelcontextprotocol/protocolVersion":"v9","progressToken":1},"a":"<b>"}}`},
		{`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}`, false,
			`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}`},
		{`{"jsonrpc":"2.0","id":3,"method":"tools/list"}`, true, `{"jsonrpc":"2.0","id":3,"method":"tools/list"}`},
		{`{"jsonrpc":"2.0","id":4,"method":"tools/list","params":[1]}`, false, `{"jsonrpc":"2.0","id":4,"method":"tools/list","params":[1]}`},
	} {
		if got := c.prepare(tc.msg, tc.raw); got != tc.want {
			t.Errorf("prepare(%s, raw %v) =\n%s\nwant\n%s", tc.msg, tc.raw, got, tc.want)
		}
	}
}

// retry copies the answer's requestState byte for byte (escapes and all)
// and replaces inputResponses; an answer without state gives none.
func TestRetryMessage(t *testing.T) {
	c := &client{sent: map[string]map[string]json.RawMessage{}, answers: map[string]json.RawMessage{}}
	c.prepare(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","inputResponses":{"old":{}},"requestState":"old"}}`, false)
	c.prepare(`{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"t"}}`, false)
	c.noteAnswer([]byte(`{"jsonrpc":"2.0","id":1,"result":{"resultType":"input_required","requestState":"s\u003c1\/x"}}`))
	c.noteAnswer([]byte(`{"jsonrpc":"2.0","id":"a","result":{"resultType":"input_required","inputRequests":{}}}`))
	got, err := c.retryMessage(`1 2 {"k": {"action":"accept"}}`)
	want := `{"id":2,"jsonrpc":"2.0","method":"tools/call","params":{"inputResponses":{"k":{"action":"accept"}},"name":"t","requestState":"s\u003c1\/x"}}`
	if err != nil || got != want {
		t.Errorf("retry 1 2: %v\n%s\nwant\n%s", err, got, want)
	}
	got, err = c.retryMessage(`"a" "b"`)
	want = `{"id":"b","jsonrpc":"2.0","method":"tools/call","params":{"name":"t"}}`
	if err != nil || got != want {
		t.Errorf(`retry "a" "b": %v\n%s\nwant\n%s`, err, got, want)
	}
	if _, err := c.retryMessage(`7 8`); err == nil || !strings.Contains(err.Error(), "no request with id 7") {
		t.Errorf("retry of a request never sent: %v", err)
	}
}

// The fake finds the round a retry answers from its requestState alone.
func TestInputStep(t *testing.T) {
	f := newFake(fakeSpec{Name: "f"})
	ask := func(key string) map[string]fakeAsk { return map[string]fakeAsk{key: {Method: "roots/list"}} }
	twoRounds := []fakeRound{{Requests: ask("a"), State: "s1"}, {Requests: ask("b"), State: "s2"}}
	oneStateless := []fakeRound{{Requests: ask("a")}}
	env := &envelope{caps: map[string]json.RawMessage{"roots": json.RawMessage(`{}`)}}
	for _, tc := range []struct {
		name   string
		rounds []fakeRound
		params string
		want   string // the result, "final ANSWERS", or "error CODE"
	}{
		{"first call", twoRounds, `{}`, `{"inputRequests":{"a":{"method":"roots/list"}},"requestState":"s1","resultType":"input_required"}`},
		{"round one answered", twoRounds, `{"requestState":"s1","inputResponses":{"a":{"roots":[]}}}`, `{"inputRequests":{"b":{"method":"roots/list"}},"requestState":"s2","resultType":"input_required"}`},
		{"an answer missing", twoRounds, `{"requestState":"s2","inputResponses":{"a":{}}}`, `{"inputRequests":{"b":{"method":"roots/list"}},"requestState":"s2","resultType":"input_required"}`},
		{"last round answered", twoRounds, `{"requestState":"s2","inputResponses":{"b":{"roots":[]},"extra":{}}}`, `final {"b":{"roots":[]},"extra":{}}`},
		{"state dropped", twoRounds, `{"inputResponses":{"a":{}}}`, "error -32602"},
		{"state forged", twoRounds, `{"requestState":"s1x","inputResponses":{"a":{}}}`, "error -32602"},
		{"answer not an object", twoRounds, `{"requestState":"s1","inputResponses":{"a":12345}}`, "error -32602"},
		{"responses null", twoRounds, `{"requestState":"s1","inputResponses":null}`, "error -32602"},
		{"stateless round answered", oneStateless, `{"inputResponses":{"a":{}}}`, `final {"a":{}}`},
		{"stateless round, state sent", oneStateless, `{"requestState":"x","inputResponses":{"a":{}}}`, "error -32602"},
	} {
		res, answers, err := f.inputStep(env, "tools/call", tc.rounds, json.RawMessage(tc.params))
		got := string(res)
		var jerr *jsonrpc.Error
		switch {
		case errors.As(err, &jerr):
			got = fmt.Sprint("error ", jerr.Code)
		case err != nil:
			got = "error " + err.Error()
		case res == nil:
			got = "final " + string(answers)
		}
		if got != tc.want {
			t.Errorf("%s: %s\nwant %s", tc.name, got, tc.want)
		}
	}
	// Capabilities not declared: -32021 naming them.
	_, _, err := f.inputStep(&envelope{caps: map[string]json.RawMessage{"elicitation": json.RawMessage(`{"url":{}}`)}}, "tools/call",
		[]fakeRound{{Requests: map[string]fakeAsk{"e": {Method: "elicitation/create"}, "r": {Method: "roots/list"}}}}, json.RawMessage(`{}`))
	var jerr *jsonrpc.Error
	if !errors.As(err, &jerr) || jerr.Code != -32021 || string(jerr.Data) != `{"requiredCapabilities":{"elicitation":{"form":{}},"roots":{}}}` {
		t.Errorf("undeclared capabilities: %v (%#v), want -32021 naming elicitation.form and roots", err, jerr)
	}
}
