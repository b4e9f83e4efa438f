package proxy

import (
	"context"
	"slices"
	"strings"
	"sync"

	"github.com/mcpgate/mcpgate/config"
	"github.com/mcpgate/mcpgate/jsonrpc"
)

var kindNoun = [numKinds]string{kindTools: "tool", kindPrompts: "prompt", kindResources: "resource", kindTemplates: "resource template"}

// resolve finds the upstream and upstream-side name for a name a client
// used. A name whose prefix names a configured server belongs to that
// server whatever the others list (DESIGN D7): "fs__write_file" listed as a
// raw name by "evil" is still fs's, and evil's item is "evil__fs__write_file".
// Only names without such a prefix are matched against servers' own names.
func (g *Gateway) resolve(ctx context.Context, k kind, name string) (route, error) {
	if set := g.live(); !set.cfg.Namespace {
		if rt, _, ok := set.names.lookup(k, name); ok {
			return rt, nil // a name the operator renamed
		}
		up := set.upstreams[0]
		if k == kindTools && up.cfg.Type == config.TypeHTTP && up.cfg.Protocol != config.ProtocolLegacy && !set.names.knows(k, up) {
			// A modern server over HTTP needs the tool's listed schema: it
			// says which arguments go into headers, or that the tool must
			// not be called at all.
			set.names.update(k, []listResult{g.fetchOne(ctx, up, k)})
		}
		if err := up.base.leftOut(k, name, name); err != nil {
			return route{}, err
		}
		return route{up, name}, nil
	}
	if up, rest, ok := splitPrefixed(name, g.live().byName); ok {
		return g.resolvePrefixed(ctx, k, name, up, rest)
	}
	return g.resolveUnprefixed(ctx, k, name)
}

// resolvePrefixed routes "server__rest" to server: by the name table when
// the server listed it (a shortened tool name cannot be split), after
// fetching that server's list once more if need be. A server whose list is
// not known (discovery failed, or nobody listed yet) gets "rest" as it is,
// so that a server whose discovery breaks still serves calls (DESIGN D1),
// and so does every unlisted URI, since URIs made from templates are never
// listed.
func (g *Gateway) resolvePrefixed(ctx context.Context, k kind, name string, up *upstream, rest string) (route, error) {
	for attempt := 0; attempt < 2; attempt++ {
		// An exposed name of another server that happens to carry this
		// prefix is not this server's.
		if rt, _, ok := g.live().names.lookup(k, name); ok && rt.up == up {
			return rt, nil
		}
		if attempt == 0 {
			g.live().names.update(k, []listResult{g.fetchOne(ctx, up, k)})
		}
	}
	if err := up.base.leftOut(k, rest, name); err != nil {
		return route{}, err
	}
	if rest != "" && (k == kindResources || !g.live().names.knows(k, up)) {
		return route{up, rest}, nil
	}
	if _, held := up.withheldItem(k, rest); held {
		return route{up, rest}, nil // refused by the policy that withheld it, with its reason
	}
	if su, err := g.serving(ctx, up); err != nil {
		return route{}, err
	} else if _, err := su.connection(); err != nil {
		return route{}, err
	}
	return route{}, jsonrpc.Errorf(jsonrpc.ErrInvalidParams, "unknown %s %q: server %q lists no %s %q", kindNoun[k], name, up.name, kindNoun[k], rest)
}

// resolveUnprefixed routes a name without a configured server's prefix: an
// exposed name; the one upstream offering it under its own name (several: an
// error listing them); for a URI, the one that returned it in a result, then
// the one whose resource template it fits; after fetching the lists once
// more, the same again; finally, for a URI, the only server that offers
// resources.
func (g *Gateway) resolveUnprefixed(ctx context.Context, k kind, name string) (route, error) {
	for attempt := 0; attempt < 2; attempt++ {
		rt, cands, ok := g.live().names.lookup(k, name)
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
				names = append(names, g.live().names.exposed(k, c.up, c.name))
			}
			slices.Sort(names)
			return route{}, jsonrpc.Errorf(jsonrpc.ErrInvalidParams, "%s %q is offered by %d servers; use one of: %s", kindNoun[k], name, len(cands), strings.Join(names, ", "))
		}
		if k == kindResources {
			if rt, found, err := g.routeUnlistedURI(name); found {
				return rt, err
			}
		}
		if attempt == 0 {
			if k == kindResources {
				g.fetchURIOwners(ctx)
			} else {
				g.fetchAll(ctx, k)
			}
		}
	}
	for _, u := range g.live().upstreams {
		if _, held := u.withheldItem(k, name); held {
			return route{u, name}, nil // refused by the policy that withheld it, with its reason
		}
		if err := u.base.leftOut(k, name, name); err != nil {
			return route{}, err
		}
	}
	if k == kindResources {
		if owner, ok := g.onlyResourceServer(); ok {
			return route{owner, name}, nil // an unlisted URI can only be its
		}
		return route{}, jsonrpc.Errorf(jsonrpc.ErrInvalidParams, "unknown resource %q: no server listed it, returned it in a result, or has a resource template that matches it; read it as server__uri", name)
	}
	return route{}, jsonrpc.Errorf(jsonrpc.ErrInvalidParams, "unknown %s %q", kindNoun[k], name)
}

// fetchURIOwners fetches, at once, every list that can say who owns a URI:
// resources, resource templates, and tools (they name MCP Apps UI
// resources).
func (g *Gateway) fetchURIOwners(ctx context.Context) {
	var wg sync.WaitGroup
	for _, k := range []kind{kindResources, kindTemplates, kindTools} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			g.fetchAll(ctx, k)
		}()
	}
	wg.Wait()
}

// onlyResourceServer is the one configured server that may own resources.
// A server whose capabilities are not known (not connected yet, or down)
// may: while one is, nobody can be named the only one, since its resources
// would be another's by accident (DESIGN D7).
func (g *Gateway) onlyResourceServer() (*upstream, bool) {
	var owner *upstream
	for _, u := range g.live().upstreams {
		init, known := u.knownInit()
		if !known {
			return nil, false
		}
		if _, ok := init.Capabilities["resources"]; ok {
			if owner != nil {
				return nil, false
			}
			owner = u
		}
	}
	return owner, owner != nil
}
