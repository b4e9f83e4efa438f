package proxy

import (
	"strings"
	"testing"
)

func TestShorten(t *testing.T) {
	long := strings.Repeat("very_long_tool_name_", 5)
	for _, tt := range []struct{ server, name string }{
		{"github", long},
		{"fs", "read file:/with spaces"},
		{"s", "ünïcödé"},
		{strings.Repeat("x", 60), "t"},
	} {
		got := shorten(tt.server, tt.name, 8)
		if !validToolName(got) {
			t.Errorf("shorten(%q, %q) = %q: not a valid tool name", tt.server, tt.name, got)
		}
		if again := shorten(tt.server, tt.name, 8); again != got {
			t.Errorf("shorten is not deterministic: %q then %q", got, again)
		}
		if other := shorten(tt.server, tt.name+"x", 8); other == got {
			t.Errorf("different tools got the same name %q", got)
		}
	}
	// A fixed expectation: the name must not change between releases, or
	// clients' saved tool permissions break.
	if got := shorten("github", long, 8); got != "github__very_long_tool_name_very_long_tool_name_very_lo_964dc777" {
		t.Errorf("shorten changed: %q", got)
	}
}

// Exposed names are unique even when one server's natural name equals
// another's shortened one, and the first server in config order keeps it.
func TestNameTableCollisions(t *testing.T) {
	a := &upstream{name: "a"}
	b := &upstream{name: "b"}
	long := strings.Repeat("n", 70)
	shortened := shorten("a", long, 8)
	tbl := newNameTable(true, []*upstream{a, b})
	tbl.update(kindTools, []listResult{
		{up: a, items: []item{{name: long}, {name: "dup"}, {name: "dup"}}},
		{up: b, items: []item{{name: "dup"}}},
	})
	seen := map[string]bool{}
	for _, rt := range []route{{a, long}, {a, "dup"}, {b, "dup"}} {
		e := tbl.exposed(kindTools, rt.up, rt.name)
		if seen[e] {
			t.Errorf("exposed name %q given twice", e)
		}
		seen[e] = true
		got, _, ok := tbl.lookup(kindTools, e)
		if !ok || got != rt {
			t.Errorf("lookup(%q) = %v, %v; want %v", e, got, ok, rt)
		}
	}
	if !seen[shortened] {
		t.Errorf("long name not exposed as %q: %v", shortened, seen)
	}
	if _, cands, _ := tbl.lookup(kindTools, "dup"); len(cands) != 2 {
		t.Errorf("unprefixed dup has %d candidates, want 2", len(cands))
	}

	// A natural name equal to an earlier shortened name is re-shortened.
	c := &upstream{name: "a"}
	tbl = newNameTable(true, []*upstream{a, c})
	natural := strings.TrimPrefix(shortened, "a__")
	tbl.update(kindTools, []listResult{
		{up: a, items: []item{{name: long}}},
		{up: c, items: []item{{name: natural}}},
	})
	ea, ec := tbl.exposed(kindTools, a, long), tbl.exposed(kindTools, c, natural)
	if ea != shortened || ec == ea || !validToolName(ec) {
		t.Errorf("collision not resolved: %q and %q", ea, ec)
	}
}
