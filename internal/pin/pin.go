// Package pin keeps the lock of tool and prompt definitions: what each
// server's tools and prompts said and accepted when the operator reviewed
// them, so that a definition that changes later (a "rug pull") is noticed.
//
// A definition is pinned by the fields that change what a model is told or
// may do: for a tool its name, title, description, inputSchema,
// outputSchema and annotations (readOnlyHint, destructiveHint … change what
// a client lets a model do); for a prompt its name, title, description and
// arguments. Left out: _meta (servers put run-specific data there) and
// icons (they change how a client shows an item, not what a model is told
// or may do).
//
// The lock file is JSON with one entry per line, sorted by server, kind and
// name, so that a change to one definition changes one line of a diff.
package pin

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
)

// Kinds of definitions and the fields pinned for each.
var pinnedFields = map[string][]string{
	"tool":   {"name", "title", "description", "inputSchema", "outputSchema", "annotations"},
	"prompt": {"name", "title", "description", "arguments"},
}

// Entry is one pinned definition.
type Entry struct {
	Server string `json:"server"`
	Kind   string `json:"kind"` // "tool" or "prompt"
	Name   string `json:"name"`
	// SHA256 is the hash of the canonical form of the pinned fields.
	SHA256 string `json:"sha256"`
	// Fields are the pinned fields' canonical values, for telling which
	// changed and how.
	Fields map[string]json.RawMessage `json:"fields"`
}

type key struct{ server, kind, name string }

// Lock is a set of pinned definitions.
type Lock struct {
	entries map[key]Entry
	servers map[string]bool
	checked checkedMemo // Check's answers (checked.go)
}

// New returns an empty lock.
func New() *Lock { return &Lock{entries: map[key]Entry{}, servers: map[string]bool{}} }

// Pin makes the entry for a definition as the server sent it.
func Pin(server, kind string, definition json.RawMessage) (Entry, error) {
	fields, ok := pinnedFields[kind]
	if !ok {
		return Entry{}, fmt.Errorf("cannot pin a %q", kind)
	}
	var def map[string]json.RawMessage
	if err := json.Unmarshal(definition, &def); err != nil {
		return Entry{}, fmt.Errorf("%s definition: %v", kind, err)
	}
	e := Entry{Server: server, Kind: kind, Fields: map[string]json.RawMessage{}}
	if err := json.Unmarshal(def["name"], &e.Name); err != nil || e.Name == "" {
		return Entry{}, fmt.Errorf("%s definition: no name", kind)
	}
	h := sha256.New()
	for _, f := range fields {
		raw, ok := def[f]
		if !ok {
			continue
		}
		c, err := canonical(raw)
		if err != nil {
			return Entry{}, fmt.Errorf("%s %q: %s: %v", kind, e.Name, f, err)
		}
		e.Fields[f] = c
		fmt.Fprintf(h, "%s\x00%d\x00", f, len(c))
		h.Write(c)
	}
	e.SHA256 = hex.EncodeToString(h.Sum(nil))
	return e, nil
}

// canonical re-encodes a JSON value with sorted keys, no insignificant
// space, and numbers as written: two servers sending the same definition
// get the same bytes.
func canonical(raw json.RawMessage) (json.RawMessage, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(b.Bytes(), "\n"), nil
}

// Add puts an entry in the lock (replacing one for the same definition).
func (l *Lock) Add(e Entry) {
	l.entries[key{e.Server, e.Kind, e.Name}] = e
	l.servers[e.Server] = true
	l.checked.forget()
}

// Same reports whether l and o pin the same definitions (both nil: no
// lock). What a lock remembers of its answers is no part of it: a reload
// that compared it would see a lock it had checked lists with as changed.
func (l *Lock) Same(o *Lock) bool {
	if l == nil || o == nil {
		return l == o
	}
	return reflect.DeepEqual(l.entries, o.entries) && reflect.DeepEqual(l.servers, o.servers)
}

// HasServer reports whether the lock has any entry for server.
func (l *Lock) HasServer(server string) bool { return l.servers[server] }

// Entries returns every entry, sorted.
func (l *Lock) Entries() []Entry {
	out := make([]Entry, 0, len(l.entries))
	for _, e := range l.entries {
		out = append(out, e)
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Server != b.Server {
			return a.Server < b.Server
		}
		if a.Kind != b.Kind {
			return a.Kind < b.Kind
		}
		return a.Name < b.Name
	})
	return out
}

// Status is how a definition compares with the lock.
type Status int

const (
	Same    Status = iota // as pinned
	Changed               // pinned, and now different
	Unknown               // the lock does not know it
)

// Check compares a definition, as the server sent it, with the lock. For
// a changed one it names the fields that differ (shared: read them only).
// A definition checked before, byte for byte, gets the same answer without
// being pinned again.
func (l *Lock) Check(server, kind string, definition json.RawMessage) (Status, []string, error) {
	known, key := l.checked.answer(server, kind, definition)
	if known != nil {
		return known.status, known.fields, known.err
	}
	status, fields, err := l.check(server, kind, definition)
	l.checked.remember(key, definition, checkedAnswer{status: status, fields: fields, err: err})
	return status, fields, err
}

// check is Check, made anew.
func (l *Lock) check(server, kind string, definition json.RawMessage) (Status, []string, error) {
	now, err := Pin(server, kind, definition)
	if err != nil {
		return Unknown, nil, err
	}
	was, ok := l.entries[key{server, kind, now.Name}]
	switch {
	case !ok:
		return Unknown, nil, nil
	case was.SHA256 == now.SHA256:
		return Same, nil, nil
	}
	return Changed, ChangedFields(was, now), nil
}

// Entry returns the pinned entry for a definition, if any.
func (l *Lock) Entry(server, kind, name string) (Entry, bool) {
	e, ok := l.entries[key{server, kind, name}]
	return e, ok
}

// ChangedFields names the fields whose values differ, sorted.
func ChangedFields(was, now Entry) []string {
	var out []string
	for _, f := range pinnedFields[now.Kind] {
		if !bytes.Equal(was.Fields[f], now.Fields[f]) {
			out = append(out, f)
		}
	}
	return out
}

// lockFile is the file's shape: entries one per line (see Write).
type lockFile struct {
	Version int     `json:"version"`
	Entries []Entry `json:"entries"`
}

// Read loads a lock file. A file that does not exist is an empty lock and
// os.ErrNotExist.
func Read(path string) (*Lock, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return New(), err
	}
	var f lockFile
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, fmt.Errorf("%s: not a lock file: %v (write it again with mcpgate lock -update)", path, err)
	}
	if f.Version != 1 {
		return nil, fmt.Errorf("%s: lock file version %d; this mcpgate reads version 1", path, f.Version)
	}
	l := New()
	for _, e := range f.Entries {
		l.Add(e)
	}
	return l, nil
}

// Write saves the lock: sorted, one entry per line, written to a
// temporary file and renamed, so that a crash leaves the old lock or the
// new one, never half of one.
func (l *Lock) Write(path string) error {
	var b bytes.Buffer
	b.WriteString("{\"version\": 1, \"entries\": [\n")
	for i, e := range l.Entries() {
		line, err := json.Marshal(e) // map keys sorted: stable
		if err != nil {
			return err
		}
		b.Write(line)
		if i < len(l.entries)-1 {
			b.WriteByte(',')
		}
		b.WriteByte('\n')
	}
	b.WriteString("]}\n")
	tmp, err := os.CreateTemp(filepath.Dir(path), ".mcpgate.lock-*")
	if err != nil {
		return err
	}
	_, err = tmp.Write(b.Bytes())
	err = errors.Join(err, tmp.Sync(), tmp.Close())
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		os.Remove(tmp.Name())
	}
	return err
}

// Diff says, for a changed definition, which fields changed and how: each
// changed field's old and new value, line by line where they differ.
func Diff(was, now Entry) string {
	var b strings.Builder
	for _, f := range ChangedFields(was, now) {
		fmt.Fprintf(&b, "  %s:\n", f)
		old, cur := indent(was.Fields[f]), indent(now.Fields[f])
		for _, line := range diffLines(old, cur) {
			fmt.Fprintf(&b, "    %s\n", line)
		}
	}
	return b.String()
}

// indent shows a canonical value as indented lines (nothing: "(absent)").
func indent(v json.RawMessage) []string {
	if v == nil {
		return []string{"(absent)"}
	}
	var b bytes.Buffer
	if json.Indent(&b, v, "", "  ") != nil {
		return []string{string(v)}
	}
	return strings.Split(b.String(), "\n")
}

// diffLines is a line diff by longest common subsequence: "- " for lines
// only in old, "+ " only in cur, "  " in both. Definitions are small.
func diffLines(old, cur []string) []string {
	n, m := len(old), len(cur)
	lcs := make([][]int, n+1)
	for i := range lcs {
		lcs[i] = make([]int, m+1)
	}
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			if old[i] == cur[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	var out []string
	i, j := 0, 0
	for i < n || j < m {
		switch {
		case i < n && j < m && old[i] == cur[j]:
			out = append(out, "  "+old[i])
			i, j = i+1, j+1
		case i < n && (j == m || lcs[i+1][j] >= lcs[i][j+1]):
			out = append(out, "- "+old[i])
			i++
		default:
			out = append(out, "+ "+cur[j])
			j++
		}
	}
	return out
}
