package mcpheader

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// Param is one tool argument that a client mirrors into a header: a
// property of the tool's inputSchema annotated "x-mcp-header": Header.
type Param struct {
	// Header is the annotation's value; the header is ParamPrefix+Header.
	Header string
	// Path names the properties from the schema's root to the argument:
	// ["region"] for arguments.region, ["db", "region"] for
	// arguments.db.region.
	Path []string
	// Type is the property's: "string", "integer" or "boolean".
	Type string
}

// HeaderName is the HTTP header that carries the argument.
func (p Param) HeaderName() string { return ParamPrefix + p.Header }

// Params returns the arguments inputSchema designates, in the order of its
// property names. An error means an annotation breaks the spec's rules, and
// the tool is invalid (clients over HTTP must leave it out of their lists):
// a value that is empty, not a string or not an HTTP token; two that are
// equal but for case; one on a property whose type is not string, integer
// or boolean; or one that is not on a property reached from the root
// through "properties" alone (not inside items, oneOf, $defs, …).
func Params(inputSchema []byte) ([]Param, error) {
	if !bytes.Contains(inputSchema, []byte(Annotation)) {
		return nil, nil // the common case, without parsing
	}
	var root any
	if err := json.Unmarshal(inputSchema, &root); err != nil {
		return nil, fmt.Errorf("inputSchema is not valid JSON: %v", err)
	}
	w := walker{seen: map[string]string{}}
	if err := w.walk(root, "", nil, false); err != nil {
		return nil, err
	}
	return w.params, nil
}

type walker struct {
	params []Param
	seen   map[string]string // lower-cased annotation value → where it is
}

// Keywords whose value is one schema, an array of schemas, or an object of
// schemas (JSON Schema 2020-12 and the drafts before it): an annotation
// anywhere in them is off the properties chain. Keywords whose values are
// data (const, enum, default, examples) are not schemas, and not searched.
var (
	subschemaKeywords = []string{"additionalProperties", "unevaluatedProperties", "propertyNames", "items",
		"additionalItems", "unevaluatedItems", "contains", "not", "if", "then", "else"}
	subschemaArrayKeywords = []string{"allOf", "anyOf", "oneOf", "prefixItems", "items"}
	subschemaMapKeywords   = []string{"$defs", "definitions", "patternProperties", "dependentSchemas", "dependencies"}
)

// walk looks for annotations in schema, found at pointer (a JSON pointer,
// for errors). path is the argument path when schema is a property reached
// through properties alone (onChain); off the chain, any annotation is an
// error.
func (w *walker) walk(schema any, pointer string, path []string, onChain bool) error {
	m, ok := schema.(map[string]any)
	if !ok {
		return nil // true, false: no keywords
	}
	if v, ok := m[Annotation]; ok {
		if err := w.annotation(m, v, pointer, path, onChain); err != nil {
			return err
		}
	}
	if props, ok := m["properties"].(map[string]any); ok {
		for _, name := range sortedKeys(props) {
			if err := w.walk(props[name], pointer+"/properties/"+escapePointer(name), append(slices.Clip(path), name), onChain || pointer == ""); err != nil {
				return err
			}
		}
	}
	for _, k := range subschemaKeywords {
		if err := w.walk(m[k], pointer+"/"+k, nil, false); err != nil {
			return err
		}
	}
	for _, k := range subschemaArrayKeywords {
		arr, _ := m[k].([]any)
		for i, s := range arr {
			if err := w.walk(s, fmt.Sprintf("%s/%s/%d", pointer, k, i), nil, false); err != nil {
				return err
			}
		}
	}
	for _, k := range subschemaMapKeywords {
		obj, _ := m[k].(map[string]any)
		for _, name := range sortedKeys(obj) {
			if err := w.walk(obj[name], pointer+"/"+k+"/"+escapePointer(name), nil, false); err != nil {
				return err
			}
		}
	}
	return nil
}

// annotation checks one x-mcp-header and records its parameter.
func (w *walker) annotation(m map[string]any, v any, pointer string, path []string, onChain bool) error {
	at := pointer + "/" + Annotation
	if !onChain || len(path) == 0 {
		return fmt.Errorf("%s: x-mcp-header may only annotate a property reached from the root through properties alone", at)
	}
	name, ok := v.(string)
	switch {
	case !ok:
		return fmt.Errorf("%s: the header name must be a string", at)
	case name == "":
		return fmt.Errorf("%s: the header name must not be empty", at)
	case !isToken(name):
		return fmt.Errorf("%s: the header name %q may hold only letters, digits and !#$%%&'*+-.^_`|~ (an HTTP token)", at, name)
	}
	if other, dup := w.seen[strings.ToLower(name)]; dup {
		return fmt.Errorf("%s: the header name %q is already used at %s (names compare case-insensitively)", at, name, other)
	}
	w.seen[strings.ToLower(name)] = at
	typ, _ := m["type"].(string)
	if typ != "string" && typ != "integer" && typ != "boolean" {
		return fmt.Errorf("%s: only a property of type string, integer or boolean may be mirrored into a header, not %s", at, describeType(m["type"]))
	}
	w.params = append(w.params, Param{Header: name, Path: path, Type: typ})
	return nil
}

func describeType(t any) string {
	if t == nil {
		return "one without a type"
	}
	b, _ := json.Marshal(t)
	return string(b)
}

// isToken reports whether s is an HTTP token (RFC 9110 section 5.6.2).
func isToken(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0) {
			return false
		}
	}
	return s != ""
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// escapePointer escapes a JSON pointer token (RFC 6901).
func escapePointer(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}
