package proxy

import (
	"context"
	"encoding/json"
)

// FetchToolInputSchema is ToolInputSchema for a transport about to check a
// modern tools/call's Mcp-Param-* headers: when the list of the tool's
// server is not known yet (nobody listed since it connected), it is
// fetched first, within ctx, as routing the call would fetch it. Without
// this, a stateless client that listed through another replica, or
// cached the list, would have its first call's headers go unchecked. A
// server run once per session has no list outside a session: false.
func (g *Gateway) FetchToolInputSchema(ctx context.Context, name string) (json.RawMessage, bool) {
	if schema, ok := g.ToolInputSchema(name); ok {
		return schema, true
	}
	rt, err := g.resolve(ctx, kindTools, name)
	if err != nil || rt.up.isolatedBase() {
		return nil, false
	}
	if !g.live().names.knows(kindTools, rt.up) {
		g.live().names.update(kindTools, []listResult{g.fetchOne(ctx, rt.up, kindTools)})
	}
	return g.ToolInputSchema(name)
}
