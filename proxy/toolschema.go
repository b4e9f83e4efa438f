package proxy

import (
	"encoding/json"
	"strings"

	"github.com/mcpgate/mcpgate/config"
	"github.com/mcpgate/mcpgate/internal/mcpheader"
)

// ToolInputSchema returns the inputSchema of the tool clients know as name,
// as its server last listed it; false when no listed tool has that name.
// An HTTP transport checks a modern request's Mcp-Param-* headers against
// the arguments the schema designates (x-mcp-header).
func (g *Gateway) ToolInputSchema(name string) (json.RawMessage, bool) {
	rt, _, ok := g.names.lookup(kindTools, name)
	if !ok {
		return nil, false
	}
	return rt.up.listedSchema(rt.name)
}

// listedSchema returns the inputSchema of the server's own tool, as it
// last listed it.
func (u *upstream) listedSchema(tool string) (json.RawMessage, bool) {
	items, _ := u.g.names.items(kindTools, u.base)
	for _, it := range items {
		if it.name == tool {
			return it.members.Get("inputSchema")
		}
	}
	return nil, false
}

// mirrorsHeaders reports whether mcpgate speaks to u as a client of the
// modern era over HTTP: it then mirrors designated arguments into
// Mcp-Param-* headers, and must leave out tools whose annotations break
// the rules for them.
func (u *upstream) mirrorsHeaders() bool {
	return u.cfg.Type == config.TypeHTTP && u.isModern()
}

// dropInvalidHeaderTools leaves out the tools whose x-mcp-header
// annotations break the spec's rules, as a client over HTTP must; the log
// says which and why.
func (u *upstream) dropInvalidHeaderTools(items []item) []item {
	kept := items[:0:0]
	var dropped []string
	for _, it := range items {
		schema, _ := it.members.Get("inputSchema")
		if _, err := mcpheader.Params(schema); err != nil {
			dropped = append(dropped, it.name+" ("+err.Error()+")")
			continue
		}
		kept = append(kept, it)
	}
	if len(dropped) > 0 {
		u.log.Warn("upstream lists tools whose x-mcp-header annotations are invalid; clients do not see them", "tools", strings.Join(dropped, "; "))
	}
	return kept
}
