package proxy

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate/internal/rawjson"
)

// Merging takes each item's exposed name by its index in the list the name
// table was made from, when the item there has the same own name; that
// must give what the table's map gives, whatever list is merged: the one
// the table saw, one reordered or changed since (a fetch racing another),
// with names contested between servers and listed twice.
func TestMergeNamesByIndexAsByRoute(t *testing.T) {
	g := testGateway(t, "a", "b", "c")
	ups := g.live().upstreams
	nt := g.live().names
	rng := rand.New(rand.NewPCG(1, 2))
	pool := []string{"read", "write", "x", "y", strings.Repeat("long_", 14), "dup", "z"}
	randomList := func() []item {
		var names []string
		for range rng.IntN(6) {
			names = append(names, pool[rng.IntN(len(pool))])
		}
		if len(names) == 0 {
			return nil
		}
		return toolItems(t, names...)
	}
	for round := range 300 {
		seen := make([]listResult, len(ups))
		merged := make([]listResult, len(ups))
		for i, up := range ups {
			seen[i] = listResult{up: up, items: randomList()}
			merged[i] = seen[i]
			if rng.IntN(2) == 0 { // changed since the table was made
				merged[i].items = randomList()
			}
		}
		nt.update(kindTools, seen)
		got, _, _ := g.merge(kindTools, merged)
		want := []byte(`{"tools":[`)
		first := true
		for _, r := range merged {
			for _, it := range r.items {
				if !first {
					want = append(want, ',')
				}
				first = false
				want = appendExposed(want, it, "name", nt.exposed(kindTools, r.up, it.name))
			}
		}
		want = append(want, "]}"...)
		if string(got) != string(want) {
			t.Fatalf("round %d: merged\n%s\nby route:\n%s", round, got, want)
		}
		paged := g.mergeItems(kindTools, merged)
		if joined := `{"tools":[` + string(joinRaw(paged)) + `]}`; joined != string(want) {
			t.Fatalf("round %d: paged\n%s\nby route:\n%s", round, joined, want)
		}
	}
}

func joinRaw(items []json.RawMessage) []byte {
	var out []byte
	for i, it := range items {
		if i > 0 {
			out = append(out, ',')
		}
		out = append(out, it...)
	}
	return out
}

// A list that repeats the server's last one lends its items the last
// one's names instead of allocating each anew; a name escaped in JSON is
// still decoded, whatever the last list held.
func TestParseListLendsLastNames(t *testing.T) {
	const n = 500
	raws := make([]string, n)
	for i := range raws {
		raws[i] = fmt.Sprintf(`{"name":"tool_%d","description":"does %d"}`, i, i)
	}
	page := []byte(`{"tools":[` + strings.Join(raws, ",") + `]}`)
	last, _, err := parseListPage(page, kindTools)
	if err != nil {
		t.Fatal(err)
	}
	parse := func(page []byte, last []item) []item {
		ms, list, err := rawjsonSplit(page, last)
		items, _, err := parseListMembers(ms, list, err, kindTools, last)
		if err != nil {
			t.Fatal(err)
		}
		return items
	}
	allocs := testing.AllocsPerRun(5, func() { parse(page, last) })
	if allocs > 20 {
		t.Errorf("a list of %d tools repeating the last took %.0f allocations, want a handful (none per name)", n, allocs)
	}
	items := parse(page, last)
	for i := range items {
		if items[i].name != last[i].name {
			t.Fatalf("item %d named %q, want %q", i, items[i].name, last[i].name)
		}
	}

	escaped := parse([]byte(`{"tools":[{"name":"tool_\u0030"},{"name":"tool_1\\"},{"name":"tool_2"}]}`), last)
	for i, want := range []string{"tool_0", `tool_1\`, "tool_2"} {
		if escaped[i].name != want {
			t.Errorf("item %d named %q, want %q", i, escaped[i].name, want)
		}
	}
}

// Duplicates are dropped unless the list names exactly what the last one,
// already without duplicates, named.
func TestCleanListDropsDuplicatesAgainstLast(t *testing.T) {
	g := testGateway(t, "a")
	u := g.live().upstreams[0]
	for _, tt := range []struct {
		items, last []string
		want        string
		dups        string
	}{
		{[]string{"x", "y"}, []string{"x", "y"}, "x,y", ""},
		{[]string{"x", "x"}, []string{"x"}, "x", "x"},
		{[]string{"x", "x"}, []string{"x", "y"}, "x", "x"},
		{[]string{"y", "x", "y"}, nil, "y,x", "y"},
	} {
		kept, dups := u.cleanList(context.Background(), kindTools, toolItems(t, tt.items...), toolItems(t, tt.last...), false)
		var names []string
		for _, it := range kept {
			names = append(names, it.name)
		}
		if strings.Join(names, ",") != tt.want || dups != tt.dups {
			t.Errorf("cleanList(%q, last %q) = %q, %q; want %q, %q", tt.items, tt.last, names, dups, tt.want, tt.dups)
		}
	}
}

func rawjsonSplit(page []byte, last []item) (rawjson.MemberList, *rawjson.ObjectList, error) {
	return rawjson.SplitWithObjectsSized(page, "tools", objectsSize(last))
}

// The discovery cache compares a list fetched again with the one it holds
// where it lies, and joins its items into one array only when it differs:
// a list of thousands of tools listed at every request cost a copy of
// megabytes each time.
func TestDiscoveryStoreComparesInPlace(t *testing.T) {
	u := &upstream{name: "s"}
	d := &discoveryCache{dir: "x", ttl: time.Hour, keys: map[*upstream]string{u: "k"}, wake: make(chan struct{}, 1),
		entries: map[string]*discoveryEntry{}, dirty: map[string]bool{}}
	items := toolItems(t, "a", "b", "c")
	d.storeList(u, kindTools, items, cacheHint{})
	if got := string(d.entries["k"].lists[kindTools].items); got != `[{"name":"a","description":"does a"},{"name":"b","description":"does b"},{"name":"c","description":"does c"}]` {
		t.Fatalf("stored %s", got)
	}
	if allocs := testing.AllocsPerRun(10, func() { d.storeList(u, kindTools, items, cacheHint{}) }); allocs > 0 {
		t.Errorf("storing the same list again took %.0f allocations, want none", allocs)
	}
	for _, other := range [][]item{items[:2], toolItems(t, "a", "b", "c", "d"), toolItems(t, "a", "b", "x")} {
		if joinedIs(d.entries["k"].lists[kindTools].items, other) {
			t.Errorf("a list of %d items taken for the one stored", len(other))
		}
	}
}
