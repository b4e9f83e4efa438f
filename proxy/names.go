package proxy

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"sync"
)

// separator joins a server's name and an item's own name: "fs__read_file".
// Server names cannot contain it or end in '_', so the first occurrence
// always splits a prefixed name correctly.
const separator = "__"

// maxToolName is the longest tool name clients accept (Claude, Cursor and
// the OpenAI function-calling API all stop at 64).
const maxToolName = 64

// route says where a client's name goes: which upstream, under which name.
type route struct {
	up   *upstream
	name string
}

// nameTable maps exposed names to routes, per kind. It is rebuilt from the
// upstreams' lists each time one is fetched; routing always goes through it,
// never through string surgery alone, because a shortened tool name cannot
// be split.
type nameTable struct {
	namespace bool
	order     []*upstream // config order: decides who keeps a contested name

	mu         sync.RWMutex
	known      [numKinds]map[*upstream][]item       // last good list of each upstream
	exposedTo  [numKinds]map[string]route           // exposed name → route
	exposedOf  [numKinds]map[route]string           // route → exposed name
	exposedIn  [numKinds]map[*upstream][]ownExposed // each list's exposed names, by index (mergecache.go)
	byOriginal [numKinds]map[string][]route         // upstream's own name → routes
	uiURIs     map[string][]route                   // MCP Apps UI resources named by tools
	templates  []templateOwner                      // resource templates, config order; replaced, never changed
	generation [numKinds]uint64                     // bumped each time a kind's table is rebuilt
	merged     [numKinds]*mergedList                // the last merged list of each kind, when cached (mergecache.go)
	peers      map[string][]string                  // what peersOf made last, for generation peersGen of the tools' table
	peersGen   uint64

	returned map[*upstream]*uriMemory // URIs each upstream returned in results; the map is fixed at creation
}

func newNameTable(namespace bool, order []*upstream) *nameTable {
	t := &nameTable{namespace: namespace, order: order, uiURIs: map[string][]route{}, returned: map[*upstream]*uriMemory{}}
	for _, up := range order {
		t.returned[up] = newURIMemory()
	}
	for k := range numKinds {
		t.known[k] = map[*upstream][]item{}
		t.exposedTo[k] = map[string]route{}
		t.exposedOf[k] = map[route]string{}
		t.byOriginal[k] = map[string][]route{}
	}
	return t
}

// update records fresh lists and rebuilds the kind's table, when a name in
// it changed: most fetches bring back the names of the last one (only a
// description or a schema may differ), and rebuilding the table of a
// list of thousands for nothing would cost as much as parsing it. An
// upstream whose fetch failed keeps its last known names, so a call to it
// gets "unavailable: why" rather than "unknown tool".
func (t *nameTable) update(k kind, results []listResult) {
	t.mu.Lock()
	defer t.mu.Unlock()
	changed := false
	for _, r := range results {
		if r.err == nil && !r.skipped {
			before, known := t.known[k][r.up]
			changed = changed || !known || !sameNames(before, r.items)
			t.known[k][r.up] = r.items
		}
	}
	if changed {
		t.rebuildLocked(k)
	}
}

// rebuild makes the table of kind k again from the lists known.
func (t *nameTable) rebuild(k kind) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.rebuildLocked(k)
}

// rebuildLocked is rebuild with t.mu held.
func (t *nameTable) rebuildLocked(k kind) {
	t.generation[k]++
	size := 0
	for _, up := range t.order {
		size += len(t.known[k][up])
	}
	exposedTo := make(map[string]route, size)
	exposedOf := make(map[route]string, size)
	exposedIn := make(map[*upstream][]ownExposed, len(t.order))
	byOriginal := make(map[string][]route, size)
	uiURIs := map[string][]route{}
	for _, up := range t.order {
		items := t.known[k][up]
		in := make([]ownExposed, len(items))
		exposedIn[up] = in
		for i, it := range items {
			rt := route{up, it.name}
			if first, dup := exposedOf[rt]; dup {
				in[i] = ownExposed{it.name, first}
				continue // the server listed the same name twice
			}
			shown := it.shownName()
			name := t.expose(k, up.name, shown)
			// A contested name goes to the first server in config order; the
			// other is shortened with a longer hash until it is unique.
			for n := 12; n <= 2*sha256.Size; n += 4 {
				if _, taken := exposedTo[name]; !taken {
					break
				}
				name = shorten(up.name, shown, n)
			}
			exposedTo[name] = rt
			exposedOf[rt] = name
			in[i] = ownExposed{it.name, name}
			byOriginal[shown] = append(byOriginal[shown], rt)
			if it.uiURI != "" {
				uiURIs[it.uiURI] = append(uiURIs[it.uiURI], route{up, it.uiURI})
			}
		}
	}
	t.exposedTo[k], t.exposedOf[k], t.exposedIn[k], t.byOriginal[k] = exposedTo, exposedOf, exposedIn, byOriginal
	switch k {
	case kindTools:
		t.uiURIs = uiURIs
	case kindTemplates:
		t.templates = compileTemplates(t.order, t.known[k])
	}
}

// sameNames reports whether two lists of one upstream give the table the
// same entries: the same names, shown names and UI resources, in order.
func sameNames(a, b []item) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].name != b[i].name || a[i].shown != b[i].shown || a[i].uiURI != b[i].uiURI {
			return false
		}
	}
	return true
}

// expose is the name a client sees for an upstream's item, before any
// collision is resolved.
func (t *nameTable) expose(k kind, server, name string) string {
	if !t.namespace {
		return name
	}
	full := server + separator + name
	if k == kindTools && !validToolName(full) {
		return shorten(server, name, 8)
	}
	return full
}

// exposed returns the name update gave to an upstream's item.
func (t *nameTable) exposed(k kind, server *upstream, name string) string {
	t.mu.RLock()
	defer t.mu.RUnlock()
	if e, ok := t.exposedOf[k][route{server, name}]; ok {
		return e
	}
	return t.expose(k, server.name, name)
}

// lookup finds the route for a name a client used: an exposed name, or else
// the candidates offering it under their own name.
func (t *nameTable) lookup(k kind, name string) (route, []route, bool) {
	t.mu.RLock()
	defer t.mu.RUnlock()
	if rt, ok := t.exposedTo[k][name]; ok {
		return rt, nil, true
	}
	cands := t.byOriginal[k][name]
	if k == kindResources {
		cands = append(cands[:len(cands):len(cands)], t.uiURIs[name]...)
	}
	return route{}, cands, false
}

// knows reports whether the upstream's list of kind k has been seen.
func (t *nameTable) knows(k kind, up *upstream) bool {
	_, ok := t.items(k, up)
	return ok
}

// items returns the upstream's last known list of kind k.
func (t *nameTable) items(k kind, up *upstream) ([]item, bool) {
	t.mu.RLock()
	defer t.mu.RUnlock()
	items, ok := t.known[k][up]
	return items, ok
}

// validToolName reports whether clients accept name: 1 to 64 characters
// from [A-Za-z0-9_.-].
func validToolName(name string) bool {
	if name == "" || len(name) > maxToolName {
		return false
	}
	for i := 0; i < len(name); i++ {
		if !validToolByte(name[i]) {
			return false
		}
	}
	return true
}

func validToolByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '.' || c == '-'
}

// shorten makes a valid tool name for server__name that is too long or has
// characters clients refuse: invalid characters become '_', the name is cut
// to fit, and a hash of the full original (hashLen hex digits) keeps it
// unique and the same on every run and machine.
func shorten(server, name string, hashLen int) string {
	sum := sha256.Sum256([]byte(server + "\x00" + name))
	hash := hex.EncodeToString(sum[:])[:min(hashLen, 2*len(sum))]
	var b strings.Builder
	full := server + separator + name
	for i := 0; i < len(full); i++ {
		if validToolByte(full[i]) {
			b.WriteByte(full[i])
		} else if c := full[i]; c < 0x80 || c >= 0xC0 { // one '_' per rune
			b.WriteByte('_')
		}
	}
	base := b.String()
	if keep := maxToolName - 1 - len(hash); len(base) > keep {
		base = base[:keep]
	}
	return base + "_" + hash
}

// splitPrefixed splits "server__rest" when server is a configured upstream.
func splitPrefixed(name string, byName map[string]*upstream) (*upstream, string, bool) {
	server, rest, ok := strings.Cut(name, separator)
	if !ok {
		return nil, "", false
	}
	up, ok := byName[server]
	return up, rest, ok
}

// peersOf is every server's tools, by server, as far as they are known:
// what a tool definition of up may shadow. up's own are in it too, so that
// a definition naming its own server's tools is not taken for shadowing.
// The map is made again only when a name changed (a new generation of the
// tools' table), and is the same map until then: every server's fetch asks
// for it, and its list policies know it by its identity. Nobody changes it.
func (t *nameTable) peersOf(up *upstream) map[string][]string {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.peers != nil && t.peersGen == t.generation[kindTools] {
		return t.peers
	}
	peers := make(map[string][]string, len(t.known[kindTools]))
	for other, items := range t.known[kindTools] {
		names := make([]string, len(items))
		for i, it := range items {
			names[i] = it.shownName()
		}
		peers[other.name] = names
	}
	t.peers, t.peersGen = peers, t.generation[kindTools]
	return peers
}
