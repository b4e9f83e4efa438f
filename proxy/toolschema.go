package proxy

import (
	"encoding/json"
	"maps"
	"slices"
	"strings"

	"github.com/mcpgate/mcpgate/config"
	"github.com/mcpgate/mcpgate/internal/mcpheader"
	"github.com/mcpgate/mcpgate/jsonrpc"
)

// ToolInputSchema returns the inputSchema of the tool clients know as name,
// as its server last listed it; false when no listed tool has that name.
// An HTTP transport checks a modern request's Mcp-Param-* headers against
// the arguments the schema designates (x-mcp-header).
func (g *Gateway) ToolInputSchema(name string) (json.RawMessage, bool) {
	rt, _, ok := g.live().names.lookup(kindTools, name)
	if !ok {
		return nil, false
	}
	return rt.up.listedSchema(rt.name)
}

// listedSchema returns the inputSchema of the server's own tool, as it
// last listed it.
func (u *upstream) listedSchema(tool string) (json.RawMessage, bool) {
	items, _ := u.g.live().names.items(kindTools, u.base)
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
// annotations break the spec's rules, as a client over HTTP must. They are
// remembered, so that a call to one is refused with the reason rather than
// as an unknown tool; the log says which and why once per change.
func (u *upstream) dropInvalidHeaderTools(items []item) []item {
	kept := items[:0:0]
	bad := map[string]string{}
	for _, it := range items {
		schema, _ := it.members.Get("inputSchema")
		if _, err := mcpheader.Params(schema); err != nil {
			bad[it.name] = err.Error()
			continue
		}
		kept = append(kept, it)
	}
	base := u.base // the configured server's, whichever instance listed
	base.mu.Lock()
	changed := !maps.Equal(bad, base.badHeader)
	base.badHeader = bad
	base.mu.Unlock()
	if changed && len(bad) > 0 {
		var dropped []string
		for _, name := range slices.Sorted(maps.Keys(bad)) {
			dropped = append(dropped, name+" ("+bad[name]+")")
		}
		u.log.Warn("upstream lists tools whose x-mcp-header annotations are invalid; clients do not see them", "tools", strings.Join(dropped, "; "))
	}
	return kept
}

// leftOut refuses a call to a tool the server lists with invalid
// x-mcp-header annotations, naming why; nil for any other name. exposed is
// the name the client used.
func (base *upstream) leftOut(k kind, tool, exposed string) error {
	if k != kindTools {
		return nil
	}
	base.mu.Lock()
	why, ok := base.badHeader[tool]
	base.mu.Unlock()
	if !ok {
		return nil
	}
	return jsonrpc.Errorf(jsonrpc.ErrInvalidParams, "tool %q is left out: server %q lists it with invalid x-mcp-header annotations (%s); the server must fix its inputSchema", exposed, base.name, why)
}
