package proxy

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/mcpgate/mcpgate/config"
)

// An unprefixed URI goes to the server that listed it; else to the one
// server that claims it, by returning it in a result or by a template it
// fits (claims of the same weight: a server returning any URI it likes
// does not outrank another's template); where two servers claim it, it is
// an error naming both. (The only
// resource server, the last resort, needs connected servers: see
// route_names.txtar.)
func TestResolveUnlistedURI(t *testing.T) {
	a, b := &upstream{name: "a"}, &upstream{name: "b"}
	ups := []*upstream{a, b}
	g := &Gateway{}
	g.liveSet.Store(&upstreamSet{cfg: &config.Config{Namespace: true}, upstreams: ups, byName: map[string]*upstream{"a": a, "b": b}, names: newNameTable(true, ups)})
	g.live().names.update(kindResources, []listResult{{up: a, items: []item{{name: "x://listed"}}}})
	g.live().names.update(kindTemplates, []listResult{
		{up: a, items: []item{{name: "x://{id}"}, {name: "y://{id}"}}},
		{up: b, items: []item{{name: "x://{+path}"}, {name: "z://{a,b}"}}},
	})
	g.live().names.remember(b, methodToolsCall, json.RawMessage(`{"content":[{"type":"resource_link","uri":"x://listed","name":"l"},{"type":"resource_link","uri":"x://linked","name":"l"}]}`))
	g.live().names.remember(a, methodResourcesRead, json.RawMessage(`{"contents":[{"uri":"x://both","text":""}]}`))
	g.live().names.remember(b, methodResourcesRead, json.RawMessage(`{"contents":[{"uri":"w://returned-by-b","text":""}]}`))
	g.live().names.remember(b, methodPromptsGet, json.RawMessage(`{"messages":[{"role":"user","content":{"type":"resource","resource":{"uri":"x://both","text":""}}}]}`))

	for _, tt := range []struct {
		uri  string
		want string // server, or the error
	}{
		{"x://listed", "a"}, // listed by a beats returned by b
		{"x://linked", `resource "x://linked" is claimed by 2 servers (returned in their results, or fitting their resource templates); use one of: a__x://linked, b__x://linked`}, // returned by b, and fits a's template x://{id}
		{"y://7", "a"},         // one template
		{"x://7/8", "b"},       // only {+path} spans '/'
		{"a__x://linked", "a"}, // a prefix decides alone
		{"x://both", `resource "x://both" is claimed by 2 servers (returned in their results, or fitting their resource templates); use one of: a__x://both, b__x://both`},
		{"x://7", `resource "x://7" is claimed by 2 servers (returned in their results, or fitting their resource templates); use one of: a__x://7, b__x://7`},
		{"w://returned-by-b", "b"}, // returned by b only
		{"z://1,2", `unknown resource "z://1,2": no server listed it, returned it in a result, or has a resource template that matches it; read it as server__uri`},
	} {
		rt, err := g.resolve(context.Background(), kindResources, tt.uri)
		got := ""
		if err != nil {
			got = err.Error()
		} else {
			got = rt.up.name
		}
		if got != tt.want {
			t.Errorf("resolve(%q) = %s, want %s", tt.uri, got, tt.want)
		}
	}
}

func TestReturnedURIs(t *testing.T) {
	for _, tt := range []struct {
		method string
		res    string
		want   []string
	}{
		{methodToolsCall, `{"content":[{"type":"text","text":"\"uri\""}]}`, nil},
		{methodToolsCall, `{"content":[{"type":"resource_link","uri":"a://1","name":"n"},{"type":"resource","resource":{"uri":"a://2","text":"t"}},{"type":"image","uri":"a://3"}]}`, []string{"a://1", "a://2"}},
		{methodToolsCall, `{"content":[{"type":"resource_link","uri":7},{"type":"resource_link","uri":"file:\/\/\/a"}],"structuredContent":{"uri":"a://4"}}`, []string{"file:///a"}},
		{methodToolsCall, `{"content":{"type":"resource_link","uri":"a://1"}}`, nil},
		{methodPromptsGet, `{"messages":[{"role":"user","content":{"type":"resource_link","uri":"p://1","name":"n"}}]}`, []string{"p://1"}},
		{methodResourcesRead, `{"contents":[{"uri":"r://1","text":"t"},{"uri":"r://2","blob":""}]}`, []string{"r://1", "r://2"}},
		{methodResourcesRead, `{"contents":[{"uri":"` + strings.Repeat("u", 3*maxRememberedURI) + `"}]}`, nil},
	} {
		if got := returnedURIs(tt.method, json.RawMessage(tt.res)); !slices.Equal(got, tt.want) {
			t.Errorf("returnedURIs(%s, %s) = %q, want %q", tt.method, tt.res, got, tt.want)
		}
	}
}

// The memory keeps the most recently used URIs within its count and byte
// budgets, however many a server returns.
func TestURIMemoryBounded(t *testing.T) {
	m := newURIMemory()
	m.add("keep://me")
	for i := range 10 * maxRememberedURIs {
		m.add(fmt.Sprintf("flood://%d/%s", i, strings.Repeat("x", i%2000)))
		if i%100 == 0 && !m.has("keep://me") { // used often: never the least recent
			t.Fatalf("a URI in use was forgotten after %d others", i)
		}
	}
	if n := m.order.Len(); n > maxRememberedURIs || n != len(m.index) {
		t.Errorf("%d URIs (%d indexed), limit %d", n, len(m.index), maxRememberedURIs)
	}
	if m.bytes > maxRememberedBytes {
		t.Errorf("%d bytes charged, limit %d", m.bytes, maxRememberedBytes)
	}
	if m.has("flood://0/") {
		t.Error("the least recently used URI is still remembered")
	}
	if last := fmt.Sprintf("flood://%d/%s", 10*maxRememberedURIs-1, strings.Repeat("x", (10*maxRememberedURIs-1)%2000)); !m.has(last) {
		t.Error("the most recent URI is not remembered")
	}
	m.add(strings.Repeat("y", maxRememberedURI+1))
	if m.has(strings.Repeat("y", maxRememberedURI+1)) {
		t.Error("a URI over the size limit was remembered")
	}
}

// What the memory really costs stays near its byte budget: a generous
// bound on the heap, after a server returned far more than the budget.
func TestURIMemoryHeap(t *testing.T) {
	tbl := newNameTable(true, []*upstream{{name: "a"}})
	up := tbl.order[0]
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	link := strings.Repeat("l", 4000)
	for i := range 20_000 { // 80 MB of URIs returned
		tbl.remember(up, methodToolsCall, json.RawMessage(fmt.Sprintf(`{"content":[{"type":"resource_link","name":"n","uri":"big://%d/%s"}]}`, i, link)))
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	if grown := int64(after.HeapAlloc) - int64(before.HeapAlloc); grown > 4*maxRememberedBytes {
		t.Errorf("heap grew by %d bytes for a memory budget of %d", grown, maxRememberedBytes)
	}
	runtime.KeepAlive(tbl)
}
