package injection

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// DefinitionFinding is one finding in a tool or prompt definition.
type DefinitionFinding struct {
	Kind string
	// Path is the JSON path of the string holding the finding:
	// "description", "inputSchema.properties.path.description",
	// "inputSchema.properties.mode.enum[2]", "arguments[0].description".
	// A member name that is not an identifier is written ["like this"].
	Path string
	// Name is true when the finding is in the member name at Path (a
	// parameter name), not in its value.
	Name bool
	// Start and End are byte offsets of the finding in that string, as
	// decoded from JSON.
	Start, End int
}

// Checker finds poisoning in tool and prompt definitions: every string of
// the definition (names, titles, descriptions at any depth, enum values,
// defaults, examples, annotations) and every member name is searched for
// the text kinds plus secret_access and cross_tool_instruction, and for
// names of other servers' tools (shadowing). It is safe for concurrent use.
type Checker struct {
	d       *Detector
	enabled kindSet
}

// NewChecker returns a definition checker reporting every kind of [Kinds]
// minus opts.Disable.
func NewChecker(opts Options) (*Checker, error) {
	enabled, err := enabledKinds(opts)
	if err != nil {
		return nil, err
	}
	return &Checker{d: newDetector(enabled, true), enabled: enabled}, nil
}

var defaultChecker = sync.OnceValue(func() *Checker {
	c, err := NewChecker(Options{})
	if err != nil {
		panic(err) // the zero Options are valid
	}
	return c
})

// DefaultChecker returns the checker with the zero Options, built once.
func DefaultChecker() *Checker { return defaultChecker() }

// maxDefinitionDepth bounds the nesting of a definition: a schema nested
// deeper is refused rather than walked.
const maxDefinitionDepth = 64

// Check returns the findings in definition, the raw JSON of one tool or
// prompt as the upstream server listed it; server is the name of that
// server and peers what the gateway knows of all its servers (nil: no
// shadowing check). Findings are in document order; within one string they
// are ordered by Start and may overlap when of different kinds.
//
// An error means the definition is not a JSON object, or is nested deeper
// than 64 levels; the error names the problem, never the text.
func (c *Checker) Check(definition []byte, server string, peers *Peers) ([]DefinitionFinding, error) {
	self, ok := objectName(definition)
	if !ok {
		var top map[string]json.RawMessage
		if err := json.Unmarshal(definition, &top); err != nil {
			return nil, fmt.Errorf("injection: definition of a tool or prompt from server %q: not a JSON object: %v", server, err)
		}
		if raw, ok := top["name"]; ok { // null is no error: a nil map
			_ = json.Unmarshal(raw, &self) // a non-string name just has no self-reference
		}
	}
	w := walker{c: c, server: strings.ToLower(server), self: strings.ToLower(self), peers: peers}
	if err := w.walk(definition); err != nil {
		return nil, fmt.Errorf("injection: definition of %q from server %q: %v", self, server, err)
	}
	return w.out, nil
}

// walker walks one definition in document order, keeping the path.
type walker struct {
	c      *Checker
	server string
	self   string
	peers  *Peers
	path   []pathElem
	out    []DefinitionFinding
}

type pathElem struct {
	key   string
	index int // -1 for a member
}

type container struct {
	object    bool
	expectKey bool
	index     int
}

func (w *walker) walk(definition []byte) error {
	var stack []container
	// value marks the end of one value in the current container.
	value := func() {
		if len(stack) == 0 {
			return
		}
		top := &stack[len(stack)-1]
		if top.object {
			top.expectKey = true
			w.path = w.path[:len(w.path)-1]
		} else {
			top.index++
		}
	}
	// enter sets the path element of the value about to be read.
	enter := func() {
		if len(stack) > 0 && !stack[len(stack)-1].object {
			w.path = append(w.path, pathElem{index: stack[len(stack)-1].index})
		}
	}
	leaveArrayElem := func() {
		if len(stack) > 0 && !stack[len(stack)-1].object {
			w.path = w.path[:len(w.path)-1]
		}
	}
	// Check has validated the definition (json.Unmarshal): the walk only
	// cuts it into tokens, where encoding/json's Decoder.Token made an
	// allocation or more of every one.
	b := definition
	for i := 0; i < len(b); {
		switch c := b[i]; c {
		case '{', '[':
			if len(stack) >= maxDefinitionDepth {
				return fmt.Errorf("nested deeper than %d levels at %s", maxDefinitionDepth, w.pathString())
			}
			enter()
			stack = append(stack, container{object: c == '{', expectKey: c == '{'})
			i++
		case '}', ']':
			stack = stack[:len(stack)-1]
			leaveArrayElem()
			value()
			i++
		case '"':
			end := closingQuote(b, i+1)
			if end == len(b) {
				return fmt.Errorf("unterminated string at byte %d", i)
			}
			s, err := jsonString(b[i : end+1])
			if err != nil {
				return err
			}
			i = end + 1
			if len(stack) > 0 && stack[len(stack)-1].object && stack[len(stack)-1].expectKey {
				w.path = append(w.path, pathElem{key: s, index: -1})
				stack[len(stack)-1].expectKey = false
				w.check(s, true)
				continue
			}
			enter()
			w.check(s, false)
			leaveArrayElem()
			value()
		case ' ', '\t', '\n', '\r', ',', ':':
			i++
		default: // a number, true, false or null
			for i < len(b) && !jsonValueEnds(b[i]) {
				i++
			}
			enter()
			leaveArrayElem()
			value()
		}
	}
	return nil
}

// jsonValueEnds reports whether c ends a number or literal.
func jsonValueEnds(c byte) bool {
	switch c {
	case ',', '}', ']', ' ', '\t', '\n', '\r':
		return true
	}
	return false
}

// closingQuote returns the index of the first quote at or after b[i] that
// is not escaped, or len(b).
func closingQuote(b []byte, i int) int {
	for i < len(b) {
		q := bytes.IndexByte(b[i:], '"')
		if q < 0 {
			break
		}
		i += q
		backslashes := 0
		for k := i - 1; k >= 0 && b[k] == '\\'; k-- {
			backslashes++
		}
		if backslashes%2 == 0 {
			return i
		}
		i++
	}
	return len(b)
}

// jsonString decodes the JSON string literal lit as encoding/json does:
// plain ASCII as it is, anything else (escapes, other characters, invalid
// UTF-8) by encoding/json itself.
func jsonString(lit []byte) (string, error) {
	body := lit[1 : len(lit)-1]
	plain := true
	for _, c := range body {
		if c == '\\' || c >= 0x80 {
			plain = false
			break
		}
	}
	if plain {
		return string(body), nil
	}
	var s string
	err := json.Unmarshal(lit, &s)
	return s, err
}

// check searches one string of the definition at the current path.
func (w *walker) check(text string, name bool) {
	if name {
		// A parameter name reads as words: content_from_reading_ssh_id_rsa.
		text = strings.Map(func(r rune) rune {
			if r == '_' || r == '-' {
				return ' '
			}
			return r
		}, text)
	}
	s := scanners.Get().(*scanner)
	defer putScanner(s)
	found := slices.Clone(w.c.d.scan(s, text))
	if name && w.c.enabled.has(KindSecretAccess) {
		if lower := strings.ToLower(text); mayNameSecretFile(lower) {
			if loc := secretParamName.FindStringIndex(lower); loc != nil {
				found = append(found, rawFinding{Kind: KindSecretAccess, Start: loc[0], End: loc[1]})
			}
		}
	}
	if w.peers != nil && w.c.enabled.has(KindShadowing) && !(len(w.path) == 1 && w.path[0].key == "name" && !name) {
		found = w.shadowing(text, found)
	}
	if len(found) == 0 {
		return
	}
	slices.SortFunc(found, func(a, b rawFinding) int {
		return cmp.Or(cmp.Compare(a.Start, b.Start), cmp.Compare(b.End, a.End), strings.Compare(a.Kind, b.Kind))
	})
	found = slices.Compact(found)
	path := w.pathString()
	for _, f := range found {
		w.out = append(w.out, DefinitionFinding{Kind: f.Kind, Path: path, Name: name, Start: f.Start, End: f.End})
	}
}

// secretParamName matches a parameter name that asks for a secret file's
// contents (content_from_reading_ssh_id_rsa), not one that names a path to
// a key (private_key_path).
var secretParamName = newLazyRegexp(`\b(?:content|contents|reading|read|output|data|text|dump|value)\b(?: [a-z0-9]+){0,3} (?:ssh|id rsa|id dsa|id ecdsa|id ed25519|aws credentials|env file|dotenv|mcp json|passwd|shadow file|credentials file)\b|\b(?:ssh|id rsa|id ed25519|aws credentials|env file|dotenv|mcp json|passwd)(?: [a-z0-9]+){0,2} (?:content|contents|text|dump)\b`)

// secretFileWords are what every match of secretParamName holds one of
// (each of its file names holds one). A name with none of them, nearly
// every parameter name, cannot match: the regexp is then neither run nor,
// for a gateway whose definitions hold none, compiled (a first tools/list
// compiled it, some 100 KB held for the process's life).
var secretFileWords = []string{"ssh", "id ", "aws credentials", "env file", "dotenv", "mcp json", "passwd", "shadow file", "credentials file"}

// mayNameSecretFile reports whether secretParamName may match lower.
func mayNameSecretFile(lower string) bool {
	for _, w := range secretFileWords {
		if strings.Contains(lower, w) {
			return true
		}
	}
	return false
}

var identifier = newLazyRegexp(`^[A-Za-z_$][A-Za-z0-9_$-]*$`)

func (w *walker) pathString() string {
	var b strings.Builder
	for _, e := range w.path {
		switch {
		case e.index >= 0:
			b.WriteString("[" + strconv.Itoa(e.index) + "]")
		case identifier.MatchString(e.key):
			if b.Len() > 0 {
				b.WriteByte('.')
			}
			b.WriteString(e.key)
		default:
			b.WriteString("[" + strconv.Quote(e.key) + "]")
		}
	}
	return b.String()
}
