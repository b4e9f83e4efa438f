package proxy

import (
	"context"
	"fmt"
	"testing"

	"github.com/mcpgate/mcpgate/config"
)

// BenchmarkListPolicies: the default list policies on ten servers' lists of
// 502 tools (5,020 in all), each list as the server sent it last time, as
// for every tools/list of servers that do not say when their lists change.
func BenchmarkListPolicies(b *testing.B) {
	cfg := &config.Config{Namespace: true, Policies: config.DefaultPolicies()}
	var pages [][]byte
	for s := range 10 {
		cfg.Servers = append(cfg.Servers, config.Server{Name: fmt.Sprintf("s%d", s), Type: config.TypeStdio, Command: "x"})
		page := []byte(`{"tools":[`)
		for i := range 502 {
			if i > 0 {
				page = append(page, ',')
			}
			page = fmt.Appendf(page, `{"name": "s%d_query_%03d", "description": "Runs query %d of workspace %d against the records it holds and returns the rows as JSON, newest first; narrow them down with filter and limit.", `+
				`"inputSchema": {"type": "object", "properties": {"table": {"type": "string", "description": "the table to read"}, `+
				`"filter": {"type": "string", "description": "a filter expression such as status = 'open'"}, `+
				`"limit": {"type": "integer", "minimum": 1, "maximum": 1000, "description": "how many rows at most"}}, "required": ["table"]}}`,
				s, i, i, s)
		}
		pages = append(pages, append(page, "]}"...))
	}
	g, err := New(cfg, Options{})
	if err != nil {
		b.Fatal(err)
	}
	ups := g.live().upstreams
	// Two copies of every page, used in turns: a list read anew is the
	// same bytes at another address.
	var lists [2][][]item
	for c := range lists {
		for s := range ups {
			items, _, err := parseListPage(append([]byte(nil), pages[s]...), kindTools)
			if err != nil {
				b.Fatal(err)
			}
			lists[c] = append(lists[c], items)
		}
	}
	results := make([]listResult, len(ups))
	for s, u := range ups {
		results[s] = listResult{up: u, items: lists[0][s]}
	}
	g.live().names.update(kindTools, results)
	ctx := context.Background()
	for s, u := range ups { // the first list: every definition checked
		u.applyListPolicies(ctx, kindTools, lists[0][s])
	}
	// read-anew: each list in bytes of its own (a list of several pages);
	// sent-again: the same bytes (a one-page list sent again is the last
	// one's items, catalog.go).
	for _, c := range []struct {
		name   string
		copies int
	}{{"read-anew", 2}, {"sent-again", 1}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for n := range b.N {
				for s, u := range ups {
					if got := u.applyListPolicies(ctx, kindTools, lists[(n+1)%c.copies][s]); len(got) != 502 {
						b.Fatalf("%d tools left of 502", len(got))
					}
				}
			}
		})
	}
}
