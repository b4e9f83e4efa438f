package proxy

import (
	"fmt"
	"testing"

	"github.com/mcpgate/mcpgate/config"
)

// BenchmarkMergeTools: ten upstreams with 500 tools each (5,000 in all),
// parsed, named and merged into one list, as for every tools/list.
func BenchmarkMergeTools(b *testing.B) {
	cfg := &config.Config{Namespace: true}
	var pages [][]byte
	for i := range 10 {
		cfg.Servers = append(cfg.Servers, config.Server{Name: fmt.Sprintf("server%d", i), Type: config.TypeStdio, Command: "x"})
		page := []byte(`{"tools":[`)
		for j := range 500 {
			if j > 0 {
				page = append(page, ',')
			}
			page = fmt.Appendf(page, `{"name":"tool_%d","description":"Does thing %d with care.","inputSchema":{"type":"object","properties":{"path":{"type":"string","description":"Where."},"limit":{"type":"integer"}},"required":["path"]},"annotations":{"readOnlyHint":true}}`, j, j)
		}
		pages = append(pages, append(page, "]}"...))
	}
	g, err := New(cfg, Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		results := make([]listResult, len(g.live().upstreams))
		for i, u := range g.live().upstreams {
			items, _, err := parseListPage(pages[i], kindTools)
			if err != nil {
				b.Fatal(err)
			}
			results[i] = listResult{up: u, items: items}
		}
		g.live().names.update(kindTools, results)
		out, _, _ := g.merge(kindTools, results)
		if len(out) < 5000*100 {
			b.Fatalf("merged list is %d bytes", len(out))
		}
	}
}
