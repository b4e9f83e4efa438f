package proxy

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/mcpgate/mcpgate/internal/rawjson"
)

// kind is one of the four lists the gateway aggregates.
type kind int

const (
	kindTools kind = iota
	kindPrompts
	kindResources
	kindTemplates
	numKinds
)

// kindInfo holds the facts about one list, in one place.
type kindInfo struct {
	list       string // the list method
	key        string // the array in the list result
	nameKey    string // the member of each item that is namespaced
	capability string // what a server declares to offer the list
	changed    string // the list_changed notification
}

var kinds = [numKinds]kindInfo{
	kindTools:     {methodToolsList, "tools", "name", "tools", notifyToolsChanged},
	kindPrompts:   {methodPromptsList, "prompts", "name", "prompts", notifyPromptsChanged},
	kindResources: {methodResourcesList, "resources", "uri", "resources", notifyResourcesChanged},
	kindTemplates: {methodTemplatesList, "resourceTemplates", "uriTemplate", "resources", notifyResourcesChanged},
}

// item is one entry of an upstream's list, as the upstream sent it (and
// the list policies left it).
type item struct {
	name    string // the value of the kind's nameKey
	shown   string // the name clients see before the prefix, when a filter renames it
	raw     json.RawMessage
	members rawjson.MemberList
	uiURI   string // a tool's _meta.ui.resourceUri (MCP Apps), routed to this server
}

// listCache is one upstream's last list of one kind. Guarded by upstream.mu.
type listCache struct {
	items   []item
	expires time.Time  // when the list may no longer be reused
	private bool       // the server said the list is for this client alone (cacheScope)
	fresh   bool       // usable for clients; false once the server said it changed
	gen     uint64     // bumped by every list_changed; a fetch begun before is stale
	running *listFetch // the fetch in progress, shared by everyone who asks meanwhile
	dupWarn string     // the duplicate names last warned about; "" when none
	sent    sentList   // the last fetch as the server sent it
}

// sentList is a fetch of a list as the server sent it, before cleanList:
// a list sent again byte for byte, in one page, is its items again, not
// split and parsed again (and, being the same bytes, its definitions are
// known to the list policies by their identity).
type sentList struct {
	page  json.RawMessage // the answer, when it came in one page; nil otherwise
	items []item
	hint  cacheHint
}

// listFetch is one fetch of a whole list; done is closed when items or err
// is set.
type listFetch struct {
	done  chan struct{}
	items []item
	err   error
}

// maxPages stops a server whose cursors never end.
const maxPages = 1000

// fetchList returns the upstream's whole list, following every page, from
// the cache when it is still fresh. Concurrent askers share one fetch. A list
// is cached only when the server promised to say when it changes
// (listChanged) or said how long it stays fresh (a modern server's ttlMs),
// never beyond cache_ttl, and never if it changed while being fetched.
func (u *upstream) fetchList(ctx context.Context, k kind) ([]item, error) {
	u.mu.Lock()
	c := &u.lists[k]
	if c.fresh && time.Now().Before(c.expires) {
		items := c.items
		u.mu.Unlock()
		return items, nil
	}
	if f := c.running; f != nil {
		u.mu.Unlock()
		select {
		case <-f.done:
			return f.items, f.err
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	f := &listFetch{done: make(chan struct{})}
	c.running = f
	gen := c.gen
	last, sent := c.items, c.sent
	u.mu.Unlock()

	// The fetch serves everyone waiting on it, so it is not bound to the
	// context of whoever happened to start it.
	var hint cacheHint
	sent, f.err = u.fetchPagesAfter(context.WithoutCancel(ctx), k, last, sent)
	f.items, hint = sent.items, sent.hint
	var dups string
	if f.err == nil {
		u.g.discovery.storeList(u, k, f.items, hint) // as the server sent it
		f.items, dups = u.cleanList(ctx, k, f.items, last, u.mirrorsHeaders())
	}
	var cap listCapability
	if raw, ok := u.capability(kinds[k].capability); ok {
		json.Unmarshal(raw, &cap)
	}
	u.mu.Lock()
	c = &u.lists[k]
	if c.running == f {
		c.running = nil
	}
	warn := false
	if f.err == nil {
		ttl := u.g.live().cfg.CacheTTL
		if hint.declared {
			ttl = min(ttl, hint.ttl)
		}
		c.items, c.expires, c.private, c.sent = f.items, time.Now().Add(ttl), hint.private, sent
		c.fresh = (cap.ListChanged || hint.declared) && ttl > 0 && c.gen == gen
		warn = dups != "" && dups != c.dupWarn
		c.dupWarn = dups
	}
	u.mu.Unlock()
	if warn {
		u.log.Warn("upstream lists a name more than once; clients see only the first entry of each", "method", kinds[k].list, "names", dups)
	}
	close(f.done)
	return f.items, f.err
}

// cleanList makes a list as a server sent it the list clients see: each
// name once, no tool whose header annotations break the rules when
// mcpgate mirrors headers to the server, the filters and list policies
// applied. It returns the names listed more than once. last is the list
// the last fetch made clean ("" names no duplicate, and a list with its
// names in the same order has none either).
func (u *upstream) cleanList(ctx context.Context, k kind, items, last []item, mirrorsHeaders bool) ([]item, string) {
	dups := ""
	if !sameOwnNames(items, last) {
		items, dups = dropDuplicates(items)
	}
	if k == kindTools && mirrorsHeaders {
		items = u.dropInvalidHeaderTools(items)
	}
	return u.applyListPolicies(ctx, k, items), dups
}

// fetchPages fetches every page of a list, and what the server said of how
// long they may be reused (the shortest of the pages' hints). last is the
// server's last list, which the new one most likely repeats: it sizes the
// split and lends the new items its names.
func (u *upstream) fetchPages(ctx context.Context, k kind, last []item) ([]item, cacheHint, error) {
	sent, err := u.fetchPagesAfter(ctx, k, last, sentList{})
	return sent.items, sent.hint, err
}

// fetchPagesAfter is fetchPages after the fetch that sent: when the server
// sends its one page again, byte for byte, the items are sent's.
func (u *upstream) fetchPagesAfter(ctx context.Context, k kind, last []item, sent sentList) (sentList, error) {
	info := kinds[k]
	var items []item
	var hint cacheHint
	cursor := ""
	// A list is held whole, and without page_size sent whole: all its
	// pages together are bounded as one message is, or a server sending
	// page after page could have mcpgate hold gigabytes.
	limit, total := u.g.live().cfg.MaxMessage, 0
	for page := 0; ; page++ {
		if page == maxPages {
			return sentList{}, fmt.Errorf("upstream %q: %s did not end after %d pages", u.name, info.list, maxPages)
		}
		var params json.RawMessage
		if cursor != "" {
			params = mustJSON(map[string]string{"cursor": cursor})
		}
		raw, err := u.call(ctx, info.list, params)
		if err != nil {
			return sentList{}, err
		}
		if total += len(raw); total > limit {
			return sentList{}, fmt.Errorf("upstream %q: %s came to more than %d bytes in %d pages, more than max_message_bytes allows one list; raise max_message_bytes", u.name, info.list, limit, page+1)
		}
		if page == 0 && sent.page != nil && string(raw) == string(sent.page) {
			// The same bytes split the same way, to the same items, hint
			// and end (a one-page list ended where it began). The split
			// the reader's scan made of raw is not taken: dropped.
			rawjson.Forget(raw)
			return sent, nil
		}
		// The result is split once, items included, for its items and its
		// cache hint: on a list of thousands of tools each pass over it
		// counts.
		var size rawjson.ObjectsSize
		if page == 0 { // most lists come in one page; the size of the others is anyone's guess
			size = objectsSize(last)
		}
		ms, list, err := rawjson.SplitWithObjectsSized(raw, info.key, size)
		pageItems, next, err := parseListMembers(ms, list, err, k, last[min(len(items), len(last)):])
		if err != nil {
			return sentList{}, fmt.Errorf("upstream %q: bad %s result: %v", u.name, info.list, err)
		}
		if h, ok := cacheHintOf(ms); ok {
			hint = hint.and(h, page == 0)
		}
		if items == nil {
			items = pageItems // one page, the usual case: not copied
		} else {
			items = append(items, pageItems...)
		}
		if next == "" || next == cursor {
			done := sentList{items: items, hint: hint}
			if page == 0 {
				done.page = raw
			}
			return done, nil
		}
		cursor = next
	}
}

// maxDupNamesLogged bounds the names one duplicate warning spells out.
const maxDupNamesLogged = 10

// dropDuplicates keeps the first item of each name. A second entry under
// the same name would reach clients as a second item with the same exposed
// name, one they could never call. It also returns the names dropped, for
// the warning ("" when none).
func dropDuplicates(items []item) ([]item, string) {
	seen := make(map[string]struct{}, len(items))
	var names []string
	dropped := 0
	kept := items[:0:0]
	for i, it := range items {
		if _, dup := seen[it.name]; !dup {
			seen[it.name] = struct{}{}
			if dropped > 0 {
				kept = append(kept, it)
			}
			continue
		}
		if dropped == 0 {
			kept = append(kept, items[:i]...)
		}
		dropped++
		if len(names) < maxDupNamesLogged && !slices.Contains(names, it.name) {
			names = append(names, it.name)
		}
	}
	if dropped == 0 {
		return items, ""
	}
	summary := strings.Join(names, ", ")
	if len(names) == maxDupNamesLogged {
		summary += ", …"
	}
	return kept, summary
}

// parseListPage splits one page of a list result. raw comes from a message
// the connection has already validated, so it is split without validating
// it again: on a list of thousands of tools that is most of the cost.
func parseListPage(raw json.RawMessage, k kind) ([]item, string, error) {
	ms, list, err := rawjson.SplitWithObjects(raw, kinds[k].key)
	return parseListMembers(ms, list, err, k, nil)
}

// parseListMembers is parseListPage on a result already split by
// rawjson.SplitWithObjects, which returned ms, list and splitErr. An item
// named as the item of last at its index takes that item's name rather
// than a copy of its own: a list that repeats the last one allocates no
// name.
func parseListMembers(ms rawjson.MemberList, list *rawjson.ObjectList, splitErr error, k kind, last []item) ([]item, string, error) {
	info := kinds[k]
	if _, ok := splitErr.(*rawjson.ElementError); ok {
		return nil, "", itemsError(info.key, splitErr)
	}
	if splitErr != nil {
		return nil, "", splitErr
	}
	var next string
	if c, ok := ms.Get("nextCursor"); ok && string(c) != "null" {
		var err error
		if next, err = stringValue(c); err != nil {
			return nil, "", fmt.Errorf("nextCursor: %v", err)
		}
	}
	arr, ok := ms.Get(info.key)
	if !ok {
		return nil, next, fmt.Errorf("no %q array", info.key)
	}
	if list == nil { // not an array: ObjectsValid says so
		elems, members, err := rawjson.ObjectsValid(arr)
		if err != nil {
			return nil, "", itemsError(info.key, err)
		}
		list = &rawjson.ObjectList{Elems: elems, Members: members}
	}
	raws, split := list.Elems, list.Members
	items := make([]item, 0, len(raws))
	for i, r := range raws {
		im := split[i]
		nameRaw, ok := im.Get(info.nameKey)
		var name string
		var err error
		if ok && i < len(last) && sameName(nameRaw, last[i].name) {
			name = last[i].name
		} else if ok {
			name, err = stringValue(nameRaw)
		}
		if !ok || err != nil || name == "" {
			return nil, "", fmt.Errorf("%s[%d]: %q must be a non-empty string", info.key, i, info.nameKey)
		}
		it := item{name: name, raw: r, members: im}
		if k == kindTools {
			it.uiURI = uiResourceURI(im)
		}
		items = append(items, it)
	}
	return items, next, nil
}

// sameName reports whether the JSON literal lit is the string name: its
// bytes between the quotes are name's, and none is escaped. (Valid JSON
// has no control byte in a string, and name, unquoted, is valid UTF-8.)
func sameName(lit json.RawMessage, name string) bool {
	return len(lit) == len(name)+2 && lit[0] == '"' && string(lit[1:len(lit)-1]) == name && strings.IndexByte(name, '\\') < 0
}

// sameOwnNames reports whether two lists have the same names in the same
// order (the names the server gave, not the shown ones).
func sameOwnNames(a, b []item) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].name != b[i].name {
			return false
		}
	}
	return true
}

// objectsSize is how a list's items split: the size the next list of the
// same server most likely has.
func objectsSize(items []item) rawjson.ObjectsSize {
	size := rawjson.ObjectsSize{Elems: len(items)}
	for _, it := range items {
		size.Members += len(it.members)
	}
	return size
}

// itemsError names the item at fault ("tools[3]: not a JSON object"), or
// the array.
func itemsError(key string, err error) error {
	if _, ok := err.(*rawjson.ElementError); ok {
		return fmt.Errorf("%s%v", key, err)
	}
	return fmt.Errorf("%s: %v", key, err)
}

// stringValue reads a JSON string from valid JSON; anything else is an
// error. (rawjson.Unquote decodes without reflection, but takes any
// literal: a number is refused here first.)
func stringValue(raw json.RawMessage) (string, error) {
	if len(raw) < 2 || raw[0] != '"' {
		return "", errors.New("not a string")
	}
	return rawjson.Unquote(raw)
}

// shownName is the item's name as clients see it, before the prefix.
func (it item) shownName() string {
	if it.shown != "" {
		return it.shown
	}
	return it.name
}

// uiResourceURI reads an MCP Apps tool's UI resource, under the current key
// (_meta.ui.resourceUri) or the legacy one (_meta["ui/resourceUri"]).
func uiResourceURI(tool rawjson.MemberList) string {
	meta, ok := tool.Get("_meta")
	if !ok {
		return ""
	}
	var m struct {
		UI struct {
			ResourceURI string `json:"resourceUri"`
		} `json:"ui"`
		Legacy string `json:"ui/resourceUri"`
	}
	json.Unmarshal(meta, &m)
	if m.UI.ResourceURI != "" {
		return m.UI.ResourceURI
	}
	return m.Legacy
}

// listResult is one configured server's contribution to a merged list: its
// items, or why it has none (err), or that it offers no such list (skipped).
type listResult struct {
	up      *upstream // the configured server (for an isolated one, not the instance)
	items   []item
	hint    cacheHint // how long the items may be reused
	cached  time.Time // when the discovery cache got the items; zero: live
	err     error
	skipped bool
}

// fetchAll asks every configured server, at once, each within its own
// timeout, and waits for all of them: the merge takes as long as the
// slowest answer, never the sum. A server that is not connected has its
// reason in err; one that does not offer the list is skipped. An isolated
// server is asked through the instance that serves ctx's session, started
// if need be.
func (g *Gateway) fetchAll(ctx context.Context, k kind) []listResult {
	set := g.live() // one set throughout: the results go to its name table
	results := make([]listResult, len(set.upstreams))
	var wg sync.WaitGroup
	for i, base := range set.upstreams {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i] = g.fetchOne(ctx, base, k)
		}()
	}
	wg.Wait()
	set.names.update(k, results)
	return results
}

func (g *Gateway) fetchOne(ctx context.Context, base *upstream, k kind) listResult {
	u, err := g.serving(ctx, base)
	if err == nil {
		_, err = u.connectionNoWait()
	}
	if err != nil {
		if r, ok := g.cachedList(ctx, base, k); ok { // still starting: last run's answer
			return r
		}
		return listResult{up: base, err: err}
	}
	if _, ok := u.capability(kinds[k].capability); !ok {
		return listResult{up: base, skipped: true}
	}
	items, err := u.fetchList(ctx, k)
	return listResult{up: base, items: items, hint: u.listHint(k), err: err}
}

// merge builds the list result a client sees: every upstream's items in
// config order, each renamed to its exposed name. Nothing else in an item is
// touched. It also returns which servers answered and which failed.
func (g *Gateway) merge(k kind, results []listResult) (json.RawMessage, []string, []error) {
	nt := g.live().names // one table for the whole merge, whatever a reload does meanwhile
	if m, ok := nt.cachedMerge(k, results); ok {
		return m.out, m.servers, nil
	}
	info := kinds[k]
	view, names := nt.exposedNames(k)
	size := 64
	for _, r := range results {
		for _, it := range r.items {
			size += len(it.raw) + 24 // room for the prefix and a comma
		}
	}
	out := make([]byte, 0, size)
	out = append(out, '{')
	out = append(out, quote(info.key)...)
	out = append(out, ":["...)
	var servers []string
	var errs []error
	first := true
	for _, r := range results {
		if r.err != nil {
			errs = append(errs, r.err)
			continue
		}
		if r.skipped {
			continue
		}
		servers = append(servers, r.up.name)
		for i, it := range r.items {
			exposed := nt.exposedAs(k, view, r.up, i, it.name)
			if !first {
				out = append(out, ',')
			}
			first = false
			out = appendExposed(out, it, info.nameKey, exposed)
		}
	}
	out = append(out, "]}"...)
	if errs == nil {
		nt.keepMerged(k, names, results, out, servers)
	}
	return out, servers, errs
}

// appendExposed appends an item with its name member set to exposed.
func appendExposed(out []byte, it item, nameKey, exposed string) []byte {
	if exposed == it.name {
		return append(out, it.raw...)
	}
	for _, m := range it.members {
		if m.Key == nameKey {
			out = append(out, it.raw[:m.Start]...)
			out = rawjson.AppendString(out, exposed)
			return append(out, it.raw[m.Start+len(m.Value):]...)
		}
	}
	return it.members.AppendReplaced(out, it.raw, nameKey, quote(exposed))
}
