package mcpheader

import (
	"reflect"
	"strings"
	"testing"
)

func TestParams(t *testing.T) {
	got, err := Params([]byte(`{"type": "object", "properties": {
		"region": {"type": "string", "x-mcp-header": "Region"},
		"priority": {"type": "integer", "x-mcp-header": "Priority"},
		"verbose": {"type": "boolean", "x-mcp-header": "Verbose"},
		"ratio": {"type": "number"},
		"db": {"type": "object", "properties": {"shard": {"type": "string", "x-mcp-header": "Shard_1"}}},
		"list": {"type": "array", "items": {"type": "string", "description": "x-mcp-header in a description is text"}},
		"literal": {"type": "string", "const": {"x-mcp-header": "Data"}},
		"x-mcp-header": {"type": "string"}
	}}`))
	if err != nil {
		t.Fatal(err)
	}
	want := []Param{
		{Header: "Shard_1", Path: []string{"db", "shard"}, Type: "string"},
		{Header: "Priority", Path: []string{"priority"}, Type: "integer"},
		{Header: "Region", Path: []string{"region"}, Type: "string"},
		{Header: "Verbose", Path: []string{"verbose"}, Type: "boolean"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Params = %+v\nwant %+v", got, want)
	}
	if got, err := Params([]byte(`{"type": "object", "properties": {"a": {"type": "string"}}}`)); got != nil || err != nil {
		t.Errorf("a schema without annotations: %v, %v", got, err)
	}
}

// The invalid annotations the conformance suite's http-invalid-tool-headers
// scenario lists (and the placements the spec rules out): each makes the
// tool invalid, with an error that says where and why.
func TestParamsInvalid(t *testing.T) {
	for _, c := range []struct {
		name, schema, want string
	}{
		{"empty", `{"properties": {"a": {"type": "string", "x-mcp-header": ""}}}`, "/properties/a/x-mcp-header: the header name must not be empty"},
		{"object", `{"properties": {"a": {"type": "object", "x-mcp-header": "A"}}}`, `not "object"`},
		{"array", `{"properties": {"a": {"type": "array", "x-mcp-header": "A"}}}`, `not "array"`},
		{"null", `{"properties": {"a": {"type": "null", "x-mcp-header": "A"}}}`, `not "null"`},
		{"number", `{"properties": {"a": {"type": "number", "x-mcp-header": "A"}}}`, `not "number"`},
		{"no type", `{"properties": {"a": {"x-mcp-header": "A"}}}`, "not one without a type"},
		{"type list", `{"properties": {"a": {"type": ["string", "null"], "x-mcp-header": "A"}}}`, `not ["string","null"]`},
		{"duplicate same case", `{"properties": {"a": {"type": "string", "x-mcp-header": "Id"}, "b": {"type": "string", "x-mcp-header": "Id"}}}`, "/properties/b/x-mcp-header: the header name \"Id\" is already used at /properties/a/x-mcp-header"},
		{"duplicate other case", `{"properties": {"a": {"type": "string", "x-mcp-header": "ID"}, "b": {"type": "string", "x-mcp-header": "id"}}}`, "case-insensitively"},
		{"space", `{"properties": {"a": {"type": "string", "x-mcp-header": "My Header"}}}`, "HTTP token"},
		{"colon", `{"properties": {"a": {"type": "string", "x-mcp-header": "My:Header"}}}`, "HTTP token"},
		{"non-ASCII", `{"properties": {"a": {"type": "string", "x-mcp-header": "Région"}}}`, "HTTP token"},
		{"control", `{"properties": {"a": {"type": "string", "x-mcp-header": "A\u0001"}}}`, "HTTP token"},
		{"not a string", `{"properties": {"a": {"type": "string", "x-mcp-header": 7}}}`, "must be a string"},
		{"root", `{"type": "string", "x-mcp-header": "A"}`, "/x-mcp-header: x-mcp-header may only annotate a property"},
		{"items", `{"properties": {"a": {"type": "array", "items": {"type": "string", "x-mcp-header": "A"}}}}`, "/properties/a/items/x-mcp-header"},
		{"properties of items", `{"properties": {"a": {"type": "array", "items": {"properties": {"b": {"type": "string", "x-mcp-header": "B"}}}}}}`, "/properties/a/items/properties/b/x-mcp-header"},
		{"oneOf", `{"oneOf": [{"properties": {"a": {"type": "string", "x-mcp-header": "A"}}}]}`, "/oneOf/0/properties/a/x-mcp-header"},
		{"$defs", `{"$defs": {"x": {"type": "string", "x-mcp-header": "A"}}, "properties": {"a": {"$ref": "#/$defs/x"}}}`, "/$defs/x/x-mcp-header"},
		{"then", `{"if": {}, "then": {"properties": {"a": {"type": "string", "x-mcp-header": "A"}}}}`, "/then/properties/a/x-mcp-header"},
		{"not JSON", `{"properties": {"x-mcp-header"`, "not valid JSON"},
	} {
		t.Run(c.name, func(t *testing.T) {
			ps, err := Params([]byte(c.schema))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("Params = %v, %v; want an error containing %q", ps, err, c.want)
			}
		})
	}
}

func FuzzParams(f *testing.F) {
	f.Add(`{"properties": {"a": {"type": "string", "x-mcp-header": "A"}}}`)
	f.Add(`{"oneOf": [{"properties": {"a": {"x-mcp-header": ""}}}], "items": [true]}`)
	f.Fuzz(func(t *testing.T, schema string) {
		ps, err := Params([]byte(schema))
		if err != nil {
			return
		}
		seen := map[string]bool{}
		for _, p := range ps {
			h := strings.ToLower(p.Header)
			if seen[h] || !isToken(p.Header) || len(p.Path) == 0 {
				t.Fatalf("Params(%s) gave an invalid parameter %+v", schema, p)
			}
			seen[h] = true
		}
	})
}
