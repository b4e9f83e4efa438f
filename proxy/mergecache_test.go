package proxy

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate/config"
)

func toolItems(t *testing.T, names ...string) []item {
	t.Helper()
	var raws []string
	for _, n := range names {
		raws = append(raws, fmt.Sprintf(`{"name":%q,"description":"does %s"}`, n, n))
	}
	items, _, err := parseListPage([]byte(`{"tools":[`+strings.Join(raws, ",")+`]}`), kindTools)
	if err != nil {
		t.Fatal(err)
	}
	return items
}

// A merged list is answered again as it was while every part of it is the
// same list (cached, or sent again) and the names are the same; a part
// fetched anew or a renamed item makes it merged again.
func TestMergedListReused(t *testing.T) {
	cfg := &config.Config{Namespace: true, Servers: []config.Server{
		{Name: "a", Type: config.TypeStdio, Command: "x"},
		{Name: "b", Type: config.TypeStdio, Command: "x"},
	}}
	g, err := New(cfg, Options{})
	if err != nil {
		t.Fatal(err)
	}
	cached := cacheHint{ttl: time.Minute, declared: true}
	a, b := toolItems(t, "one", "two"), toolItems(t, "three")
	results := func() []listResult {
		return []listResult{{up: g.live().upstreams[0], items: a, hint: cached}, {up: g.live().upstreams[1], items: b, hint: cached}}
	}
	list := func() []byte {
		rs := results()
		g.live().names.update(kindTools, rs)
		out, _, _ := g.merge(kindTools, rs)
		return out
	}
	same := func(x, y []byte) bool { return len(x) > 0 && len(y) > 0 && &x[0] == &y[0] } // the very bytes, not a copy

	first := list()
	if want := `{"tools":[{"name":"a__one","description":"does one"},{"name":"a__two","description":"does two"},{"name":"b__three","description":"does three"}]}`; string(first) != want {
		t.Fatalf("merged:\n%s\nwant:\n%s", first, want)
	}
	if again := list(); !same(first, again) {
		t.Errorf("the same cached lists were merged again")
	}

	b = toolItems(t, "three") // fetched anew: another list, if the same names
	b[0].raw = []byte(`{"name":"three","description":"changed"}`)
	changed := list()
	if same(first, changed) || !strings.Contains(string(changed), `{"name":"b__three","description":"changed"}`) {
		t.Errorf("a part fetched anew was not merged again: %s", changed)
	}

	a = toolItems(t, "one", "zwei") // a name changed: the table is rebuilt
	renamed := list()
	if !strings.Contains(string(renamed), `"a__zwei"`) || strings.Contains(string(renamed), `"a__two"`) {
		t.Errorf("a renamed item is not in the merged list: %s", renamed)
	}

	cached = cacheHint{declared: true} // not cached: fetched for each client
	b = toolItems(t, "three")
	uncached := list()
	if again := list(); !same(uncached, again) {
		t.Errorf("parts not cached but sent again, the same items, were merged again")
	}
	b = toolItems(t, "three") // read anew, the same bytes: merged again, the same
	if again := list(); same(uncached, again) || string(again) != string(uncached) {
		t.Errorf("a part read anew: merged %s (again: %v), want %s merged again", again, same(uncached, again), uncached)
	}
}
