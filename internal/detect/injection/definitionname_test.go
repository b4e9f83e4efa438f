package injection

import (
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"
)

// refDefinitionName is how Check read a definition's name before
// objectName: the definition decoded into a map of its members.
func refDefinitionName(definition []byte) (string, error) {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(definition, &top); err != nil {
		return "", err
	}
	var self string
	if raw, ok := top["name"]; ok {
		_ = json.Unmarshal(raw, &self)
	}
	return self, nil
}

// TestObjectNameAsDecoded: for the definitions of the test data, and
// variants of them with names repeated, escaped, nested, not strings, or
// the object broken, objectName reads the name the map did, and refuses
// exactly what the map refused or what is no object.
func TestObjectNameAsDecoded(t *testing.T) {
	defs := []string{
		`{}`, ` { } `, `null`, `[]`, `[{"name":"x"}]`, `"name"`, `1`, `{"name":"x"`, `{"name":"x"}}`, `{"name":"x"} x`,
		`{"name":"a","name":"b"}`, `{"name":"a","name":1}`, `{"name":1,"name":"b"}`, `{"name":null}`, `{"name":true}`,
		`{"na\u006de":"esc"}`, `{"name":"\u0041\n\"q\"","x":[1,{"name":"nested"}]}`, `{"Name":"case"}`,
		`{"x":{"name":"deep"},"y":"}\"{","name" : "after"}`, "{\n\t\"name\"\t:\r\n\"ws\"\n}", `{"name":"caf\u00e9 ok"}`,
		"{\"name\":\"bad \xff utf8\"}", "{\"n\xffme\":\"k\"}", `{"name":"a\\"}`, `{"a":"\\","name":"z"}`,
		`{"a":-1.5e3,"b":false,"c":null,"name":"n","d":[[],{}]}`,
	}
	for _, file := range []string{"tools_ordinary.json", "tools_malicious.json", "tools_hard_negative.json"} {
		for _, s := range readDefinitions(t, file) {
			defs = append(defs, string(s.Def))
		}
	}
	rnd := rand.New(rand.NewPCG(5, 6))
	n := len(defs)
	for k := range n {
		d := defs[k]
		defs = append(defs,
			strings.Replace(d, `{`, `{"name": "first", `, 1),
			strings.Replace(d, `{`, `{"name": 7, `, 1),
			strings.TrimSuffix(strings.TrimSpace(d), "}")+`, "name": "last"}`,
			strings.ReplaceAll(d, `": `, "\" :\n "),
			strings.Replace(d, `"name"`, `"n\u0061me"`, 1),
			d[:rnd.IntN(len(d)+1)],
		)
	}
	for _, d := range defs {
		want, wantErr := refDefinitionName([]byte(d))
		got, ok := objectName([]byte(d))
		if ok && (wantErr != nil || got != want) {
			t.Errorf("objectName(%.80q) = %q; the map read %q (error %v)", d, got, want, wantErr)
		}
		if !ok && wantErr == nil && strings.TrimSpace(d) != "null" {
			t.Errorf("objectName(%.80q) refused what the map read (%q)", d, want)
		}
	}
}
