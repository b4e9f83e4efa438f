package proxy

import (
	"encoding/json"
	"slices"
	"strings"

	"github.com/mcpgate/mcpgate/jsonrpc"
)

// A URI no server listed may still have an owner: the server that returned
// it in a result, or the server whose resource template it fits. This file
// finds it, for an unprefixed URI only: a prefix decides by itself.

// templateOwner is one server's resource template, compiled.
type templateOwner struct {
	up   *upstream
	tmpl uriTemplate
}

// compileTemplates compiles every known template that uriTemplate can
// match, in config order.
func compileTemplates(order []*upstream, known map[*upstream][]item) []templateOwner {
	var out []templateOwner
	for _, up := range order {
		for _, it := range known[up] {
			if tmpl, ok := parseURITemplate(it.name); ok {
				out = append(out, templateOwner{up, tmpl})
			}
		}
	}
	return out
}

// remember records the URIs an upstream returned in a result of method.
// Only a namespaced gateway routes by them.
func (t *nameTable) remember(up *upstream, method string, res json.RawMessage) {
	m := t.returned[up]
	if !t.namespace || m == nil {
		return
	}
	for _, uri := range returnedURIs(method, res) {
		m.add(uri)
	}
}

// returnedBy lists the upstreams that returned uri in a result.
func (t *nameTable) returnedBy(uri string) []*upstream {
	var ups []*upstream
	for _, up := range t.order {
		if t.returned[up].has(uri) {
			ups = append(ups, up)
		}
	}
	return ups
}

// templateOwners lists the upstreams with a resource template uri fits.
// Matching takes time in proportion to the URI's length, so a URI longer
// than any the gateway remembers is not matched: it can be read prefixed.
func (t *nameTable) templateOwners(uri string) []*upstream {
	if len(uri) > maxRememberedURI {
		return nil
	}
	t.mu.RLock()
	templates := t.templates
	t.mu.RUnlock()
	var ups []*upstream
	for _, to := range templates {
		if !slices.Contains(ups, to.up) && to.tmpl.match(uri) {
			ups = append(ups, to.up)
		}
	}
	return ups
}

// routeUnlistedURI finds the owner of an unprefixed URI no server listed:
// the server that returned it in a result, or whose resource template it
// fits. Both are claims of the same weight: a server that merely returned
// a URI (a hostile one can return anything) does not outrank another whose
// template the URI fits. found is false when nobody claims it; several
// servers claiming it is an error listing them (DESIGN D7: never guess).
func (g *Gateway) routeUnlistedURI(uri string) (rt route, found bool, err error) {
	var owners []*upstream
	for _, up := range append(g.live().names.returnedBy(uri), g.live().names.templateOwners(uri)...) {
		if !slices.Contains(owners, up) {
			owners = append(owners, up)
		}
	}
	switch len(owners) {
	case 0:
		return route{}, false, nil
	case 1:
		return route{owners[0], uri}, true, nil
	}
	var names []string
	for _, up := range owners {
		names = append(names, g.live().names.exposed(kindResources, up, uri))
	}
	slices.Sort(names)
	return route{}, true, jsonrpc.Errorf(jsonrpc.ErrInvalidParams, "resource %q is claimed by %d servers (returned in their results, or fitting their resource templates); use one of: %s", uri, len(owners), strings.Join(names, ", "))
}
