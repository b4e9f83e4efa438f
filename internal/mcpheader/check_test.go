package mcpheader

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

func TestMatches(t *testing.T) {
	for _, c := range []struct {
		header, value string
		want          bool
	}{
		{"us-west1", `"us-west1"`, true},
		{"us-west2", `"us-west1"`, false},
		{"", `""`, true},
		{"42", `42`, true},
		{"42.0", `42`, true}, // integers compare numerically
		{"4.2e1", `42`, true},
		{"42", `42.0`, true},
		{"-7", `-7`, true},
		{"43", `42`, false},
		{"0x2A", `42`, false}, // a JSON number, not Go's
		{"+42", `42`, false},
		{"84/2", `42`, false},
		{"9007199254740993", `9007199254740992`, false}, // exact, not float64
		{"true", `true`, true},
		{"True", `true`, false},
		{"false", `true`, false},
		{"42", `"42"`, true}, // a string argument compares as text
		{"42.0", `"42"`, false},
		{"x", `{"a":1}`, false},
		{"x", `null`, false},
	} {
		if got := Matches(c.header, json.RawMessage(c.value)); got != c.want {
			t.Errorf("Matches(%q, %s) = %v, want %v", c.header, c.value, got, c.want)
		}
	}
}

func TestEncodeArg(t *testing.T) {
	for _, c := range []struct {
		value, header string
		ok            bool
	}{
		{`"Hello, 世界"`, "=?base64?SGVsbG8sIOS4lueVjA==?=", true},
		{`""`, "", true},
		{` 42 `, "42", true},
		{`true`, "true", true},
		{`null`, "", false},
		{`{"a":1}`, "", false},
		{`[1]`, "", false},
	} {
		got, ok := EncodeArg(json.RawMessage(c.value))
		if got != c.header || ok != c.ok {
			t.Errorf("EncodeArg(%s) = %q, %v; want %q, %v", c.value, got, ok, c.header, c.ok)
		}
	}
}

// The spec's server validation of Mcp-Param headers: present with the
// argument, absent without it (or with null), equal after decoding.
func TestCheckParams(t *testing.T) {
	params, err := Params([]byte(`{"type": "object", "properties": {
		"region": {"type": "string", "x-mcp-header": "Region"},
		"priority": {"type": "integer", "x-mcp-header": "Priority"},
		"db": {"type": "object", "properties": {"shard": {"type": "string", "x-mcp-header": "Shard"}}}}}`))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, args string
		headers    map[string][]string
		want       string // "" for no error, else a part of it
	}{
		{"all mirrored", `{"region":"us-west1","priority":3,"db":{"shard":"s1"}}`,
			map[string][]string{"mcp-param-region": {"us-west1"}, "MCP-PARAM-PRIORITY": {"3.0"}, "Mcp-Param-Shard": {"=?base64?czE=?="}}, ""},
		{"none designated present", `{"other":1}`, nil, ""},
		{"null is absent", `{"region":null}`, nil, ""},
		{"whitespace around the value", `{"region":"us-west1"}`, map[string][]string{"Mcp-Param-Region": {"  us-west1\t"}}, ""},
		{"unknown param headers are ignored", `{}`, map[string][]string{"Mcp-Param-Other": {"x"}}, ""},
		{"missing", `{"region":"us-west1"}`, nil, "the Mcp-Param-Region header is missing"},
		{"nested missing", `{"db":{"shard":"s1"}}`, nil, "the Mcp-Param-Shard header is missing: the tool's inputSchema designates arguments.db.shard"},
		{"present without the argument", `{}`, map[string][]string{"Mcp-Param-Region": {"us-west1"}}, "the Mcp-Param-Region header is sent but arguments.region is absent or null"},
		{"present with null", `{"region":null}`, map[string][]string{"Mcp-Param-Region": {"x"}}, "absent or null"},
		{"different", `{"region":"us-west1"}`, map[string][]string{"Mcp-Param-Region": {"eu-west1"}}, "the Mcp-Param-Region header does not match arguments.region in the body"},
		{"twice", `{"region":"us-west1"}`, map[string][]string{"Mcp-Param-Region": {"us-west1", "us-west1"}}, "sent 2 times"},
		{"bad base64", `{"region":"Hello"}`, map[string][]string{"Mcp-Param-Region": {"=?base64?SGVsbG8?="}}, "the Mcp-Param-Region header is not valid Base64"},
		{"raw non-ASCII", `{"region":"été"}`, map[string][]string{"Mcp-Param-Region": {"\xc3\xa9t\xc3\xa9"}}, "the Mcp-Param-Region header holds characters"},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := http.Header{}
			for k, vs := range c.headers {
				for _, v := range vs {
					h.Add(k, v)
				}
			}
			err := CheckParams(params, json.RawMessage(c.args), h.Values)
			switch {
			case c.want == "" && err != nil:
				t.Errorf("CheckParams: %v, want no error", err)
			case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
				t.Errorf("CheckParams: %v, want an error containing %q", err, c.want)
			case err != nil && (strings.Contains(err.Error(), "us-west1") || strings.Contains(err.Error(), "eu-west1")):
				t.Errorf("CheckParams: %v: an error must not carry argument values", err)
			}
		})
	}
}
