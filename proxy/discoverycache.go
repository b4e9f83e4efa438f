package proxy

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"log/slog"
	"maps"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/mcpgate/mcpgate/config"
)

// The discovery cache keeps what each server answered to initialize and to
// its four lists, in memory and in a file per server, so that a gateway
// started in front of servers that take seconds to start (npx) can answer a
// client's initialize and first lists at once, from the last run's
// answers, while the servers start (issue 14).
//
// What it never does is change what a client ends up seeing (DESIGN D1):
// it answers only while a server's first connection attempt is under way,
// says so in the answer's _meta, and once the server is up its live list
// is fetched and compared with what was served, and clients are told
// (list_changed) when they differ. Calls never come from the cache: a call
// to a cached tool waits for its server, as it would without a cache.
//
// A file is named after its key, a hash of the server's config entry
// (secrets only hashed), so a changed entry simply finds no file. It holds
// the lists as the server sent them, before filters and policies: those
// are applied whenever the lists are served, as they are to live ones, so
// a changed policy never needs the cache dropped.
//
// Not kept: lists of servers run once per session (isolation "session":
// what an instance lists may be its session's own), and lists a server
// marks as for this client alone (cacheScope "private"), which a file
// would hand to the next process. Nothing is kept longer than cache_ttl,
// or than a modern server's ttlMs.

// discoveryCache is the gateway's discovery cache. A nil or disabled one
// (no directory) caches nothing; every method may be called on it.
type discoveryCache struct {
	dir  string // "": off
	ttl  time.Duration
	log  *slog.Logger
	wake chan struct{} // 1-buffered: something is dirty

	mu      sync.Mutex                    // guards the fields below; never held across I/O
	keys    map[*upstream]string          // the configured servers it serves, and their keys (see follow)
	entries map[string]*discoveryEntry    // by key
	served  map[*upstream]*[numKinds]bool // lists answered from the cache since the server started
	dirty   map[string]bool               // keys whose file is behind
	warned  map[string]bool               // files already warned about (once each)
	badSize map[string]bool               // keys too large to write, warned about
}

// discoveryEntry is one server's cached answers.
type discoveryEntry struct {
	server string          // its name in the config that wrote it, for operators reading the file
	init   json.RawMessage // its initialize answer (initializeResult); nil: none
	initAt time.Time
	lists  [numKinds]cachedList
}

// cachedList is one list as the server sent it.
type cachedList struct {
	items   json.RawMessage // the items array, byte for byte; nil: none cached
	fetched time.Time
	expires time.Time
}

func (l cachedList) usable(now time.Time) bool {
	return l.items != nil && now.Before(l.expires)
}

// newDiscoveryCache reads the files of cfg's servers, if the cache is on.
func newDiscoveryCache(cfg *config.Config, ups []*upstream, log *slog.Logger) *discoveryCache {
	d := &discoveryCache{ttl: cfg.CacheTTL, log: log, keys: map[*upstream]string{}, wake: make(chan struct{}, 1),
		entries: map[string]*discoveryEntry{}, served: map[*upstream]*[numKinds]bool{}, dirty: map[string]bool{}, warned: map[string]bool{}, badSize: map[string]bool{}}
	if cfg.CacheOff || cfg.CacheDir == "" {
		return d
	}
	d.dir = cfg.CacheDir
	for _, u := range ups {
		if u.isolatedBase() {
			continue
		}
		key := discoveryKey(u.cfg)
		d.keys[u] = key
		if e := d.read(key); e != nil {
			d.entries[key] = e
		}
	}
	return d
}

// follow has the cache serve the servers a reload added, as those it was
// made with (their files read, if there are any, and kept from now on),
// and forget those it removed (their files stay, for a later run).
func (d *discoveryCache) follow(added, gone []*upstream) {
	if !d.on() {
		return
	}
	for _, u := range added {
		if u.isolatedBase() {
			continue
		}
		key := discoveryKey(u.cfg)
		e := d.read(key) // before taking d.mu: it reads a file
		d.mu.Lock()
		d.keys[u] = key
		if e != nil && d.entries[key] == nil {
			d.entries[key] = e
		}
		d.mu.Unlock()
	}
	d.mu.Lock()
	for _, u := range gone {
		delete(d.keys, u)
		delete(d.served, u)
	}
	d.mu.Unlock()
}

// discoveryKey names a server's cache file: a hash of everything in its
// config entry that decides what it is and answers, and of a stdio
// server's working directory. Env and header values
// go in only hashed, and the key is itself a hash, so the file name tells
// nothing of them.
func discoveryKey(s config.Server) string {
	h := sha256.New()
	field := func(name, value string) { fmt.Fprintf(h, "%s %q\n", name, value) }
	hashed := func(v string) string { sum := sha256.Sum256([]byte(v)); return hex.EncodeToString(sum[:]) }
	field("format", discoveryFormat)
	field("type", s.Type)
	field("command", s.Command)
	for _, a := range s.Args {
		field("arg", a)
	}
	field("cwd", s.Cwd)
	if s.Command != "" {
		// The directory it runs in, as exec resolves it: the same entry in
		// two projects' configs (a relative script, no cwd) is two servers.
		if dir, err := filepath.Abs(s.Cwd); err == nil {
			field("dir", dir)
		}
	}
	field("url", s.URL)
	field("protocol", s.Protocol)
	for _, name := range slices.Sorted(maps.Keys(s.Env)) {
		field("env", name+"="+hashed(s.Env[name]))
	}
	for _, name := range slices.Sorted(maps.Keys(s.Headers)) {
		field("header", name+"="+hashed(s.Headers[name]))
	}
	return hex.EncodeToString(h.Sum(nil))
}

func (d *discoveryCache) on() bool { return d != nil && d.dir != "" }

// setTTL is cache_ttl changed by a reload: it bounds what is kept from now
// on.
func (d *discoveryCache) setTTL(ttl time.Duration) {
	if d == nil {
		return
	}
	d.mu.Lock()
	d.ttl = ttl
	d.mu.Unlock()
}

func (d *discoveryCache) path(key string) string { return filepath.Join(d.dir, key+".json") }

// startingEntry is u's entry while u's first connection attempt is under
// way, the only time the cache answers for it. d.mu held; it takes u.mu,
// so that a list marked served here is served before u is connected (see
// takeServed).
func (d *discoveryCache) startingEntry(u *upstream) (*discoveryEntry, bool) {
	key, ok := d.keys[u]
	if !ok {
		return nil, false
	}
	u.mu.Lock()
	starting := u.state == stateConnecting
	u.mu.Unlock()
	e := d.entries[key]
	if !starting || e == nil || e.init == nil || !time.Now().Before(e.initAt.Add(d.ttl)) {
		return nil, false
	}
	return e, true
}

// startingInit is the cached initialize answer of a server still starting.
func (d *discoveryCache) startingInit(u *upstream) (initializeResult, bool) {
	if !d.on() {
		return initializeResult{}, false
	}
	d.mu.Lock()
	e, ok := d.startingEntry(u)
	var raw json.RawMessage
	if ok {
		raw = e.init
	}
	d.mu.Unlock()
	var res initializeResult
	return res, ok && json.Unmarshal(raw, &res) == nil
}

// covers reports whether a client's first request need not wait for u:
// its initialize answer is cached, and so are the lists it offers, at
// least one of them, and none has expired. (A list no client asked for in
// the last run is not known; it is not waited for, so as not to lose the
// others: a client that asks for it gets the lists without u, and
// list_changed when u is up, as without the cache.) Expired lists mean a
// long pause: u is waited for, as on a cold start.
func (d *discoveryCache) covers(u *upstream) bool {
	init, ok := d.startingInit(u)
	if !ok {
		return false
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	e := d.entries[d.keys[u]]
	if e == nil {
		return false // a reload removed u since startingInit looked
	}
	now := time.Now()
	usable := 0
	offered := 0
	for k := range numKinds {
		if _, ok := init.Capabilities[kinds[k].capability]; !ok {
			continue
		}
		offered++
		switch l := e.lists[k]; {
		case l.usable(now):
			usable++
		case !l.fetched.IsZero():
			return false
		}
	}
	return usable > 0 || offered == 0
}

// cachedList answers list k for base from the cache, if base is still
// starting and the list is cached: the items go through the same filters
// and policies as a live list's.
func (g *Gateway) cachedList(ctx context.Context, base *upstream, k kind) (listResult, bool) {
	d := g.discovery
	if !d.on() {
		return listResult{}, false
	}
	d.mu.Lock()
	e, ok := d.startingEntry(base)
	var l cachedList
	var initRaw json.RawMessage
	if ok {
		l, initRaw = e.lists[k], e.init
	}
	var init initializeResult
	if !ok || json.Unmarshal(initRaw, &init) != nil {
		d.mu.Unlock()
		return listResult{}, false
	}
	if _, offered := init.Capabilities[kinds[k].capability]; !offered {
		d.mu.Unlock()
		return listResult{up: base, skipped: true}, true
	}
	if !l.usable(time.Now()) {
		d.mu.Unlock()
		return listResult{}, false
	}
	// Marked under d.mu, which startingEntry held with u.mu: before the
	// server can be marked connected, so takeServed cannot miss it.
	if d.served[base] == nil {
		d.served[base] = &[numKinds]bool{}
	}
	d.served[base][k] = true
	d.mu.Unlock()

	items, _, err := parseListPage(wrapItems(k, l.items), k)
	if err != nil { // checked when read; a bug if it fails now
		g.log.Error("BUG: a discovery cache list no longer parses", "server", base.name, "method", kinds[k].list, "err", err)
		return listResult{}, false
	}
	// The server's era is the one it had when the list was cached.
	mirrors := base.cfg.Type == config.TypeHTTP && init.ProtocolVersion == versionModern
	items, _ = base.cleanList(ctx, k, items, nil, mirrors)
	// Not to be reused by a modern client: the live list replaces it soon.
	return listResult{up: base, items: items, hint: cacheHint{declared: true}, cached: l.fetched}, true
}

// takeServed reports (once) whether list k, or another the same
// notification covers, was answered from the cache while u started.
func (d *discoveryCache) takeServed(u *upstream, k kind) bool {
	if !d.on() {
		return false
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	s := d.served[u]
	if s == nil {
		return false
	}
	served := false
	for _, kk := range sameNotification(k) {
		served = served || s[kk]
		s[kk] = false
	}
	return served
}

// wrapItems makes a list result of cached items, to be parsed as a page.
func wrapItems(k kind, items json.RawMessage) json.RawMessage {
	out := append([]byte(nil), '{')
	out = append(out, quote(kinds[k].key)...)
	out = append(out, ':')
	out = append(out, items...)
	return append(out, '}')
}

// storeList keeps a list just fetched from u, as the server sent it (items
// before filters and policies), for as long as it may be reused.
func (d *discoveryCache) storeList(u *upstream, k kind, items []item, hint cacheHint) {
	if !d.on() {
		return
	}
	d.mu.Lock()
	_, ok := d.keys[u]
	ttl := d.ttl
	d.mu.Unlock()
	if !ok {
		return // an isolated server's instance
	}
	if hint.declared {
		ttl = min(ttl, hint.ttl)
	}
	if hint.declared && hint.private || ttl <= 0 {
		d.forget(u, k)
		return
	}
	now := time.Now()
	// A server listed at every client's request sends the same list each
	// time: it is compared where it is, not joined first (megabytes a
	// list, for a list of thousands of tools).
	d.mu.Lock()
	e := d.entries[d.keys[u]]
	var compared []byte // the list items were compared with
	if e != nil {
		compared = e.lists[k].items
	}
	same := e != nil && now.Before(e.lists[k].fetched.Add(ttl/2)) && joinedIs(compared, items)
	d.mu.Unlock()
	if same {
		return
	}
	size := 2
	for _, it := range items {
		size += len(it.raw) + 1
	}
	arr := make([]byte, 0, size)
	arr = append(arr, '[')
	for i, it := range items {
		if i > 0 {
			arr = append(arr, ',')
		}
		arr = append(arr, it.raw...)
	}
	arr = append(arr, ']')
	d.update(u, func(e *discoveryEntry) bool {
		// A server listed at every client's request (it sends no
		// list_changed) costs a write per half life, not per list. The
		// list compared above is not compared again: only one another
		// fetch stored meanwhile.
		if old := e.lists[k]; !sameMemory(old.items, compared) && string(old.items) == string(arr) && now.Before(old.fetched.Add(ttl/2)) {
			return false
		}
		e.lists[k] = cachedList{items: arr, fetched: now, expires: now.Add(ttl)}
		return true
	})
}

// sameMemory reports whether a and b are the same bytes of memory (both
// empty counts: nothing was compared).
func sameMemory(a, b []byte) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
}

// joinedIs reports whether arr is items joined as storeList joins them.
func joinedIs(arr []byte, items []item) bool {
	if len(arr) < 2 || arr[0] != '[' {
		return false
	}
	rest := arr[1:]
	for i, it := range items {
		if i > 0 {
			if len(rest) == 0 || rest[0] != ',' {
				return false
			}
			rest = rest[1:]
		}
		if !bytes.HasPrefix(rest, it.raw) {
			return false
		}
		rest = rest[len(it.raw):]
	}
	return string(rest) == "]"
}

// connected records u's initialize answer. A server that answers
// differently from last time (another version, other capabilities) may
// list differently too: its cached lists go.
func (d *discoveryCache) connected(u *upstream) {
	if !d.on() {
		return
	}
	init, ok := u.knownInit()
	if !ok {
		return
	}
	raw := mustJSON(init)
	d.update(u, func(e *discoveryEntry) bool {
		if string(e.init) != string(raw) {
			e.lists = [numKinds]cachedList{}
		}
		e.init, e.initAt = raw, time.Now()
		return true
	})
}

// forget drops u's cached lists of the kinds given (all, if none): the
// server said they changed, or it went away.
func (d *discoveryCache) forget(u *upstream, ks ...kind) {
	if !d.on() {
		return
	}
	if len(ks) == 0 {
		ks = []kind{kindTools, kindPrompts, kindResources, kindTemplates}
	}
	d.update(u, func(e *discoveryEntry) bool {
		changed := false
		for _, k := range ks {
			changed = changed || e.lists[k].items != nil
			e.lists[k] = cachedList{}
		}
		return changed
	})
}

// update changes u's entry and, if change reports a change, has its file
// written.
func (d *discoveryCache) update(u *upstream, change func(*discoveryEntry) bool) {
	d.mu.Lock()
	key, ok := d.keys[u]
	if !ok {
		d.mu.Unlock()
		return // an isolated server, or one of its instances
	}
	e := d.entries[key]
	if e == nil {
		e = &discoveryEntry{server: u.name}
		d.entries[key] = e
	}
	if !change(e) {
		d.mu.Unlock()
		return
	}
	d.dirty[key] = true
	d.mu.Unlock()
	select {
	case d.wake <- struct{}{}:
	default:
	}
}

// cachedMeta is the _meta of a list some of whose servers' items come from
// the discovery cache: which, and how old their lists are.
func cachedMeta(results []listResult) (metaPair, bool) {
	type cached struct {
		Server string `json:"server"`
		AgeMs  int64  `json:"age_ms"`
	}
	var out []cached
	for _, r := range results {
		if !r.cached.IsZero() && r.err == nil {
			out = append(out, cached{r.up.name, max(0, time.Since(r.cached).Milliseconds())})
		}
	}
	return metaPair{metaCached, mustJSON(out)}, len(out) > 0
}

// metaCached is the _meta key of a list result that names the servers
// whose items come from the discovery cache (they were still starting).
const metaCached = "mcpgate/cached"

// withdrawCached tells clients that were given cached lists of a server
// that failed to start: what they were shown is gone.
func (g *Gateway) withdrawCached(u *upstream) {
	for _, k := range []kind{kindTools, kindPrompts, kindResources} {
		if g.discovery.takeServed(u, k) {
			u.notifyListChanged(k)
		}
	}
}
