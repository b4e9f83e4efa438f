package proxy

import "encoding/json"

// ToolInputSchema returns the inputSchema of the tool clients know as name,
// as its server last listed it; false when no listed tool has that name.
// An HTTP transport checks a modern request's Mcp-Param-* headers against
// the arguments the schema designates (x-mcp-header).
func (g *Gateway) ToolInputSchema(name string) (json.RawMessage, bool) {
	rt, _, ok := g.names.lookup(kindTools, name)
	if !ok {
		return nil, false
	}
	items, _ := g.names.items(kindTools, rt.up)
	for _, it := range items {
		if it.name == rt.name {
			return it.members.Get("inputSchema")
		}
	}
	return nil, false
}
