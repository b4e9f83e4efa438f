package proxy

import (
	"context"
	"slices"
	"strings"

	"github.com/mcpgate/mcpgate/jsonrpc"
)

var kindNoun = [numKinds]string{kindTools: "tool", kindPrompts: "prompt", kindResources: "resource", kindTemplates: "resource template"}

// resolve finds the upstream and upstream-side name for a name a client
// used. In order: an exposed name; the one upstream offering it under its
// own name (several: an error listing them); after fetching the lists once
// more, the same again; finally "server__rest" for a server whose list is
// not known (discovery failed, or the client never listed), so that a server
// whose discovery breaks still serves calls (DESIGN D1).
func (g *Gateway) resolve(ctx context.Context, k kind, name string) (route, error) {
	if !g.cfg.Namespace {
		return route{g.upstreams[0], name}, nil
	}
	for attempt := 0; attempt < 2; attempt++ {
		rt, cands, ok := g.names.lookup(k, name)
		if ok {
			return rt, nil
		}
		switch len(cands) {
		case 1:
			return cands[0], nil
		case 0:
		default:
			var names []string
			for _, c := range cands {
				names = append(names, g.names.exposed(k, c.up, c.name))
			}
			slices.Sort(names)
			return route{}, jsonrpc.Errorf(jsonrpc.ErrInvalidParams, "%s %q is offered by %d servers; use one of: %s", kindNoun[k], name, len(cands), strings.Join(names, ", "))
		}
		if attempt == 0 {
			g.fetchAll(ctx, k)
			if k == kindResources {
				g.fetchAll(ctx, kindTools) // tools name MCP Apps UI resources
			}
		}
	}
	if up, rest, ok := splitPrefixed(name, g.byName); ok && rest != "" {
		if k == kindResources || !g.names.knows(k, up) {
			return route{up, rest}, nil
		}
		if su, err := g.serving(ctx, up); err != nil {
			return route{}, err
		} else if _, err := su.connection(); err != nil {
			return route{}, err
		}
	}
	if k == kindResources {
		// One server offers resources at all: an unlisted URI can only be its.
		var owners []*upstream
		for _, u := range g.upstreams {
			if _, ok := u.capability("resources"); ok {
				owners = append(owners, u)
			}
		}
		if len(owners) == 1 {
			return route{owners[0], name}, nil
		}
	}
	return route{}, jsonrpc.Errorf(jsonrpc.ErrInvalidParams, "unknown %s %q", kindNoun[k], name)
}
