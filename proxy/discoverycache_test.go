package proxy

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate/config"
)

func TestDiscoveryKey(t *testing.T) {
	base := config.Server{Type: config.TypeStdio, Command: "npx", Args: []string{"-y", "server-github"},
		Env: map[string]string{"GITHUB_TOKEN": "ghp_secret"}, Headers: map[string]string{"Authorization": "Bearer tok"}}
	key := discoveryKey(base)
	if len(key) != 64 || strings.Contains(key, "secret") {
		t.Fatalf("discoveryKey = %q, want 64 hex digits", key)
	}
	// Everything that decides what the server is changes the key; a map's
	// order does not.
	change := []func(*config.Server){
		func(s *config.Server) { s.Command = "uvx" },
		func(s *config.Server) { s.Args = []string{"-y", "server-gitlab"} },
		func(s *config.Server) { s.Args = []string{"-y server-github"} },
		func(s *config.Server) { s.Env = map[string]string{"GITHUB_TOKEN": "ghp_other"} },
		func(s *config.Server) { s.Env = map[string]string{"GH_TOKEN": "ghp_secret"} },
		func(s *config.Server) { s.Headers = map[string]string{"Authorization": "Bearer other"} },
		func(s *config.Server) { s.URL = "https://example.com/mcp" },
		func(s *config.Server) { s.Cwd = "/srv" },
		func(s *config.Server) { s.Protocol = config.ProtocolModern },
	}
	for i, c := range change {
		s := base
		c(&s)
		if discoveryKey(s) == key {
			t.Errorf("change %d left the key as it was", i)
		}
	}
	same := base
	same.Name, same.Timeout = "renamed", time.Hour
	if discoveryKey(same) != key {
		t.Error("the server's name or timeout changed the key: another config naming it otherwise would not share its cache")
	}
}

// A file keeps each item byte for byte: a live list compared with it
// differs only where the server changed something.
func TestDiscoveryFileRoundTrip(t *testing.T) {
	tool := `{ "name": "a<b>&c",  "description": "\u00e9 spaced" }`
	items, _, err := parseListPage(json.RawMessage(`{"tools":[`+tool+`,{"name":"b"}]}`), kindTools)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now().Round(0)
	e := &discoveryEntry{server: "gh", init: json.RawMessage(`{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"gh","version":"1"}}`), initAt: now}
	u := &upstream{name: "gh"}
	d := &discoveryCache{dir: "x", ttl: time.Hour, keys: map[*upstream]string{u: "k"}, wake: make(chan struct{}, 1),
		entries: map[string]*discoveryEntry{"k": e}, dirty: map[string]bool{}}
	d.storeList(u, kindTools, items, cacheHint{})
	got, err := decodeDiscoveryEntry(e.encode("k"), "k", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if want := `[` + tool + `,{"name":"b"}]`; string(got.lists[kindTools].items) != want {
		t.Errorf("items after a round trip:\n%s\nwant\n%s", got.lists[kindTools].items, want)
	}
	if string(got.init) != string(e.init) || !got.initAt.Equal(now) || got.server != "gh" {
		t.Errorf("init after a round trip: %s at %v (%q)", got.init, got.initAt, got.server)
	}
	if got.lists[kindPrompts].items != nil {
		t.Errorf("prompts appeared: %s", got.lists[kindPrompts].items)
	}
	// A lower cache_ttl since the file was written holds.
	short, _ := decodeDiscoveryEntry(e.encode("k"), "k", time.Minute)
	if exp := short.lists[kindTools].expires; exp.After(short.lists[kindTools].fetched.Add(time.Minute)) {
		t.Errorf("expiry %v beyond fetched+cache_ttl", exp)
	}
}

func TestDiscoveryFileRejected(t *testing.T) {
	good := (&discoveryEntry{server: "s", lists: [numKinds]cachedList{kindTools: {items: json.RawMessage(`[{"name":"a"}]`), fetched: time.Now(), expires: time.Now().Add(time.Hour)}}}).encode("k")
	if _, err := decodeDiscoveryEntry(good, "k", time.Hour); err != nil {
		t.Fatalf("a good file: %v", err)
	}
	for name, tt := range map[string]struct {
		data, key, want string
	}{
		"truncated":     {string(good[:len(good)/2]), "k", "not a cache file"},
		"another key":   {string(good), "other", "another server entry"},
		"other format":  {strings.Replace(string(good), discoveryFormat, "mcpgate-discovery/2", 1), "k", "format"},
		"item unnamed":  {strings.Replace(string(good), `{"name":"a"}`, `{"title":"a"}`, 1), "k", "lists.tools"},
		"items object":  {strings.Replace(string(good), `[{"name":"a"}]`, `{"name":"a"}`, 1), "k", "lists.tools"},
		"unknown list":  {strings.Replace(string(good), `"tools":`, `"gadgets":`, 1), "k", "unknown list"},
		"init not init": {strings.Replace(string(good), `"lists"`, `"init":{"result":[1]},"lists"`, 1), "k", "init.result"},
	} {
		if _, err := decodeDiscoveryEntry([]byte(tt.data), tt.key, time.Hour); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: err = %v, want one that says %q", name, err, tt.want)
		}
	}
}

// What a server says not to share or not to reuse is not kept.
func TestDiscoveryStoreHonoursHints(t *testing.T) {
	items := []item{{name: "a", raw: json.RawMessage(`{"name":"a"}`)}}
	for _, tt := range []struct {
		hint cacheHint
		kept bool
	}{
		{cacheHint{}, true}, // a legacy server: cache_ttl
		{cacheHint{declared: true, ttl: time.Minute}, true},
		{cacheHint{declared: true, ttl: time.Minute, private: true}, false},
		{cacheHint{declared: true}, false}, // ttlMs 0
	} {
		u := &upstream{name: "s"}
		d := &discoveryCache{dir: "x", ttl: time.Hour, keys: map[*upstream]string{u: "k"}, wake: make(chan struct{}, 1),
			entries: map[string]*discoveryEntry{}, dirty: map[string]bool{}}
		d.storeList(u, kindTools, items, tt.hint)
		e := d.entries["k"]
		if kept := e != nil && e.lists[kindTools].items != nil; kept != tt.kept {
			t.Errorf("hint %+v: kept = %v, want %v", tt.hint, kept, tt.kept)
		}
		ttl := time.Hour // cache_ttl
		if tt.hint.declared {
			ttl = min(ttl, tt.hint.ttl)
		}
		if tt.kept && e.lists[kindTools].expires.After(time.Now().Add(ttl)) {
			t.Errorf("hint %+v: expires %v, after cache_ttl or ttlMs", tt.hint, e.lists[kindTools].expires)
		}
	}
}

func TestReadOwnFile(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "f.json")
	if err := os.WriteFile(file, []byte("12345"), 0o600); err != nil {
		t.Fatal(err)
	}
	if data, err := readOwnFile(file, 5); err != nil || string(data) != "12345" {
		t.Errorf("readOwnFile = %q, %v", data, err)
	}
	if _, err := readOwnFile(file, 4); err == nil || !strings.Contains(err.Error(), "limit") {
		t.Errorf("over the limit: err = %v", err)
	}
	link := filepath.Join(dir, "link.json")
	if err := os.Symlink(file, link); err != nil {
		t.Skip("no symbolic links here:", err)
	}
	if _, err := readOwnFile(link, 100); !errors.Is(err, errSymlink) {
		t.Errorf("through a symbolic link: err = %v, want errSymlink", err)
	}
	if _, err := readOwnFile(dir, 100); err == nil {
		t.Error("a directory was read as a cache file")
	}
}

// write replaces the file whole, mode 0600, in a directory it makes 0700,
// and replaces a symbolic link rather than writing through it.
func TestDiscoveryWrite(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "cache")
	var logs bytes.Buffer
	d := &discoveryCache{dir: dir, log: slog.New(slog.NewTextHandler(&logs, nil)), warned: map[string]bool{}, badSize: map[string]bool{}}
	if err := d.write("k", []byte("one")); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(dir); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("directory: %v, %v; want mode 0700", fi.Mode(), err)
	}
	if fi, err := os.Lstat(d.path("k")); err != nil || fi.Mode() != 0o600 {
		t.Errorf("file: %v, %v; want a regular file, mode 0600", fi.Mode(), err)
	}
	target := filepath.Join(t.TempDir(), "elsewhere")
	os.WriteFile(target, []byte("theirs"), 0o600)
	os.Remove(d.path("k"))
	if err := os.Symlink(target, d.path("k")); err != nil {
		t.Skip("no symbolic links here:", err)
	}
	if err := d.write("k", []byte("two")); err != nil {
		t.Fatal(err)
	}
	if data, _ := os.ReadFile(target); string(data) != "theirs" {
		t.Errorf("written through a symbolic link: the target holds %q", data)
	}
	if data, _ := readOwnFile(d.path("k"), 10); string(data) != "two" {
		t.Errorf("file holds %q, want two", data)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("%d files in the directory, want 1 (no temporary file left)", len(entries))
	}
	// Too large: not written, the old file removed, one warning.
	big := bytes.Repeat([]byte("x"), maxDiscoveryFile+1)
	d.write("k", big)
	d.write("k", big)
	if _, err := os.Lstat(d.path("k")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("after a too large write the old file is still there: %v", err)
	}
	if n := strings.Count(logs.String(), "too large"); n != 1 {
		t.Errorf("%d warnings about size, want 1:\n%s", n, logs.String())
	}
}

// FuzzDecodeDiscoveryEntry: a file from a shared directory is input like
// any other; what decodes must encode back to the same lists.
func FuzzDecodeDiscoveryEntry(f *testing.F) {
	now := time.Now()
	f.Add((&discoveryEntry{server: "s", init: json.RawMessage(`{"capabilities":{"tools":{}}}`), initAt: now,
		lists: [numKinds]cachedList{kindTools: {items: json.RawMessage(`[{"name":"a"}]`), fetched: now, expires: now.Add(time.Hour)}}}).encode("k"))
	f.Add([]byte(`{"format":"mcpgate-discovery/1","key":"k","lists":{"resourceTemplates":{"items":[{"uriTemplate":"x://{y}"}]}}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		e, err := decodeDiscoveryEntry(data, "k", time.Hour)
		if err != nil {
			return
		}
		again, err := decodeDiscoveryEntry(e.encode("k"), "k", time.Hour)
		if err != nil {
			t.Fatalf("an entry that decoded does not decode once encoded: %v", err)
		}
		for k := range numKinds {
			if string(again.lists[k].items) != string(e.lists[k].items) {
				t.Errorf("list %d: %s, then %s", k, e.lists[k].items, again.lists[k].items)
			}
		}
	})
}

// A list fetched again unchanged is not written again until half its life
// has passed; a changed one is written at once.
func TestDiscoveryStoreWritesOnChange(t *testing.T) {
	u := &upstream{name: "s"}
	d := &discoveryCache{dir: "x", ttl: time.Hour, keys: map[*upstream]string{u: "k"}, wake: make(chan struct{}, 1),
		entries: map[string]*discoveryEntry{}, dirty: map[string]bool{}}
	a := []item{{name: "a", raw: json.RawMessage(`{"name":"a"}`)}}
	b := []item{{name: "b", raw: json.RawMessage(`{"name":"b"}`)}}
	for i, step := range []struct {
		items []item
		age   time.Duration // of the stored list, before the step
		dirty bool
	}{
		{a, 0, true},
		{a, 0, false},
		{a, 31 * time.Minute, true},
		{b, 0, true},
	} {
		clear(d.dirty)
		if e := d.entries["k"]; e != nil {
			e.lists[kindTools].fetched = e.lists[kindTools].fetched.Add(-step.age)
		}
		d.storeList(u, kindTools, step.items, cacheHint{})
		if d.dirty["k"] != step.dirty {
			t.Errorf("step %d: dirty = %v, want %v", i, d.dirty["k"], step.dirty)
		}
	}
}

// A client's first request waits for a server unless the cache can answer
// for it: not when its lists have expired (a long pause), nor when none of
// them is known.
func TestDiscoveryCovers(t *testing.T) {
	now := time.Now()
	fresh := cachedList{items: json.RawMessage(`[]`), fetched: now, expires: now.Add(time.Hour)}
	expired := cachedList{items: json.RawMessage(`[]`), fetched: now.Add(-2 * time.Hour), expires: now.Add(-time.Hour)}
	toolsAndPrompts := json.RawMessage(`{"capabilities":{"tools":{},"prompts":{}}}`)
	for _, tt := range []struct {
		name   string
		init   json.RawMessage
		initAt time.Time
		lists  [numKinds]cachedList
		want   bool
	}{
		{"all fresh", toolsAndPrompts, now, [numKinds]cachedList{kindTools: fresh, kindPrompts: fresh}, true},
		{"prompts never asked for", toolsAndPrompts, now, [numKinds]cachedList{kindTools: fresh}, true},
		{"prompts expired", toolsAndPrompts, now, [numKinds]cachedList{kindTools: fresh, kindPrompts: expired}, false},
		{"no list known", toolsAndPrompts, now, [numKinds]cachedList{}, false},
		{"offers no list", json.RawMessage(`{"capabilities":{}}`), now, [numKinds]cachedList{}, true},
		{"initialize expired", toolsAndPrompts, now.Add(-2 * time.Hour), [numKinds]cachedList{kindTools: fresh, kindPrompts: fresh}, false},
		{"no initialize", nil, time.Time{}, [numKinds]cachedList{kindTools: fresh}, false},
	} {
		u := &upstream{name: "s"} // state: connecting
		d := &discoveryCache{dir: "x", ttl: time.Hour, keys: map[*upstream]string{u: "k"},
			entries: map[string]*discoveryEntry{"k": {init: tt.init, initAt: tt.initAt, lists: tt.lists}}}
		if got := d.covers(u); got != tt.want {
			t.Errorf("%s: covers = %v, want %v", tt.name, got, tt.want)
		}
	}
	// Once the server's first attempt has ended, the cache answers nothing.
	u := &upstream{name: "s", state: stateFailed}
	d := &discoveryCache{dir: "x", ttl: time.Hour, keys: map[*upstream]string{u: "k"},
		entries: map[string]*discoveryEntry{"k": {init: toolsAndPrompts, initAt: now, lists: [numKinds]cachedList{kindTools: fresh}}}}
	if d.covers(u) {
		t.Error("covers a server whose first attempt failed")
	}
}

// cache_ttl changed by a reload bounds the lists kept from then on.
func TestDiscoveryTTLFollowsReload(t *testing.T) {
	u := &upstream{name: "s"}
	d := &discoveryCache{dir: "x", ttl: time.Hour, keys: map[*upstream]string{u: "k"}, wake: make(chan struct{}, 1),
		entries: map[string]*discoveryEntry{}, dirty: map[string]bool{}}
	d.setTTL(time.Minute)
	before := time.Now()
	d.storeList(u, kindTools, []item{{name: "a", raw: json.RawMessage(`{"name":"a"}`)}}, cacheHint{})
	if exp := d.entries["k"].lists[kindTools].expires; exp.After(before.Add(time.Minute + time.Second)) {
		t.Errorf("kept until %v from now; want at most the new cache_ttl, 1m", exp.Sub(before))
	}
}

// A list answered from the cache for a modern server over HTTP is cleaned
// as a live one would be: a tool whose x-mcp-header annotations break the
// rules is left out (it cannot be called), as it is from the live list.
func TestCachedListDropsInvalidHeaderTools(t *testing.T) {
	cfg := &config.Config{Namespace: true, Servers: []config.Server{{Name: "new", Type: config.TypeHTTP, URL: "http://127.0.0.1:1/mcp", Timeout: time.Second, MaxTimeout: time.Second, InitTimeout: time.Second}}}
	g, err := New(cfg, Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	u := g.live().byName["new"] // never started: still connecting
	now := time.Now()
	tools := json.RawMessage(`[{"name":"bad","inputSchema":{"type":"object","properties":{"n":{"type":"number","x-mcp-header":"N"}}}},{"name":"good","inputSchema":{"type":"object"}}]`)
	g.discovery = &discoveryCache{dir: "x", ttl: time.Hour, keys: map[*upstream]string{u: "k"}, served: map[*upstream]*[numKinds]bool{},
		entries: map[string]*discoveryEntry{"k": {
			init: json.RawMessage(`{"protocolVersion":"` + versionModern + `","capabilities":{"tools":{}},"serverInfo":{"name":"new","version":"1"}}`), initAt: now,
			lists: [numKinds]cachedList{kindTools: {items: tools, fetched: now, expires: now.Add(time.Hour)}},
		}}}
	r, ok := g.cachedList(context.Background(), u, kindTools)
	if !ok {
		t.Fatal("the cache did not answer")
	}
	var names []string
	for _, it := range r.items {
		names = append(names, it.name)
	}
	if !slices.Equal(names, []string{"good"}) {
		t.Errorf("listed %v from the cache; want [good]: bad's header annotations break the rules", names)
	}
}
