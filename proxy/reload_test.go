package proxy

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate/config"
)

func loadTestConfig(t *testing.T, src string) *config.Config {
	t.Helper()
	cfg, err := config.Load([]byte(src), "gate.json", func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	cfg.SetDefaults()
	return cfg
}

// TestDiffConfigs: servers are added, removed, changed or kept; a kept
// server's policies change without a restart; settings that cannot change
// while running are reported and keep their old value.
func TestDiffConfigs(t *testing.T) {
	old := loadTestConfig(t, `{"mcpServers": {
		"keep": {"command": "k"},
		"gone": {"command": "g"},
		"edit": {"command": "e", "args": ["1"]},
		"filtered": {"command": "f"}},
	  "listen": "127.0.0.1:8000", "page_size": 5, "audit": {"path": "a.jsonl"}}`)
	next := loadTestConfig(t, `{"mcpServers": {
		"keep": {"command": "k"},
		"edit": {"command": "e", "args": ["2"]},
		"filtered": {"command": "f", "tools": {"deny": ["rm"]}},
		"added": {"command": "a"}},
	  "listen": "127.0.0.1:9000", "page_size": 7, "audit": {"path": "b.jsonl", "include_bodies": true}}`)
	ch, run, err := diffConfigs(old, next)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		what      string
		got, want []string
	}{
		{"added", ch.Added, []string{"added"}},
		{"removed", ch.Removed, []string{"gone"}},
		{"changed", ch.Changed, []string{"edit"}},
		{"settings", ch.Settings, []string{"page_size", "audit.include_bodies", "mcpServers.filtered.tools"}},
		{"restart needed", ch.NeedRestart, []string{"listen", "audit.path"}},
	} {
		if !slices.Equal(c.got, c.want) {
			t.Errorf("%s: %q, want %q", c.what, c.got, c.want)
		}
	}
	if run.HTTP.Listen != "127.0.0.1:8000" || run.Audit.Path != "a.jsonl" {
		t.Errorf("settings needing a restart: listen %q, audit.path %q; want the old values kept", run.HTTP.Listen, run.Audit.Path)
	}
	if run.PageSize != 7 || !run.Audit.IncludeBodies {
		t.Errorf("live settings: page_size %d, include_bodies %v; want the new values", run.PageSize, run.Audit.IncludeBodies)
	}
	if next.HTTP.Listen != "127.0.0.1:9000" {
		t.Errorf("the new config was changed: listen %q", next.HTTP.Listen)
	}

	// The same config again: nothing changed.
	ch, _, err = diffConfigs(old, old)
	if err != nil || len(ch.Added)+len(ch.Removed)+len(ch.Changed)+len(ch.Settings)+len(ch.NeedRestart) != 0 {
		t.Errorf("the same config: %+v, %v; want no change", ch, err)
	}
}

// TestDiffConfigsNamespaceKept: "namespace": false stays until a restart,
// so a new config with a second server cannot run beside it.
func TestDiffConfigsNamespaceKept(t *testing.T) {
	old := loadTestConfig(t, `{"mcpServers": {"one": {"command": "o"}}, "namespace": false}`)
	next := loadTestConfig(t, `{"mcpServers": {"one": {"command": "o"}, "two": {"command": "t"}}}`)
	if _, _, err := diffConfigs(old, next); err == nil {
		t.Fatal("no error; want namespace: false kept refusing a second server")
	}
}

// TestReloadSwapsTheSet: a reload publishes a new set in which a kept
// server is the same upstream and a changed one a new one; a request that
// began before it holds the old set until it ends, and only then is the
// old set released (its dropped servers may be stopped).
func TestReloadSwapsTheSet(t *testing.T) {
	cfg := loadTestConfig(t, `{"mcpServers": {"keep": {"command": "k"}, "gone": {"command": "g"}, "edit": {"command": "e"}}}`)
	g, err := New(cfg, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	old := g.live()
	release := g.holdLive().release
	ch, err := g.Reload(loadTestConfig(t, `{"mcpServers": {"keep": {"command": "k"}, "edit": {"command": "e2"}, "added": {"command": "a"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(ch.Removed, []string{"gone"}) || !slices.Equal(ch.Changed, []string{"edit"}) || !slices.Equal(ch.Added, []string{"added"}) {
		t.Errorf("changes: %+v", ch)
	}
	set := g.live()
	if set == old {
		t.Fatal("the live set was not replaced")
	}
	if set.byName["keep"] != old.byName["keep"] {
		t.Error("the kept server is a new upstream; want the same one, connection and all")
	}
	if set.byName["edit"] == old.byName["edit"] {
		t.Error("the changed server is the same upstream; want a new one")
	}
	if _, ok := set.byName["gone"]; ok {
		t.Error("the removed server is still routed to")
	}
	select {
	case <-old.released:
		t.Fatal("the old set was released while a request that began under it was in flight")
	default:
	}
	release()
	select {
	case <-old.released:
	case <-time.After(10 * time.Second):
		t.Fatal("the old set was not released once its last request ended")
	}
}

// TestReloadInvalidKeepsTheSet: a config that cannot run is refused and
// changes nothing.
func TestReloadInvalidKeepsTheSet(t *testing.T) {
	cfg := loadTestConfig(t, `{"mcpServers": {"one": {"command": "o"}}, "namespace": false}`)
	g, err := New(cfg, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	old := g.live()
	if _, err := g.Reload(loadTestConfig(t, `{"mcpServers": {"one": {"command": "o"}, "two": {"command": "t"}}}`)); err == nil {
		t.Fatal("no error")
	}
	if g.live() != old {
		t.Error("a refused reload replaced the live set")
	}
}

// A reload keeps the cluster section in force, and with it the share of a
// limit declared for the whole cluster: the new file's replica count does
// not divide it meanwhile, and a cluster section new in the file cannot
// make a single gateway enforce a share.
func TestDiffConfigsKeepsClusterShares(t *testing.T) {
	load := func(src string) *config.Config {
		t.Helper()
		cfg, err := config.Load([]byte(src), "gate.json", func(string) (string, bool) { return "0123456789abcdef0123456789abcdef", true })
		if err != nil {
			t.Fatal(err)
		}
		cfg.SetDefaults()
		return cfg
	}
	const limit = `"policies": [{"policy": "rate_limit", "per": "tool", "rate": 4, "burst": 4, "scope": "%s"}]`
	inCluster := func(replicas int) *config.Config {
		return load(fmt.Sprintf(`{"mcpServers": {"one": {"command": "o"}}, "cluster": {"replica": "a", "replicas": %d, "key": "${K}"}, `+limit+`}`, replicas, "cluster"))
	}
	_, run, err := diffConfigs(inCluster(2), inCluster(4))
	if err != nil {
		t.Fatal(err)
	}
	if run.Cluster.Replicas != 2 || run.Policies[0].Replicas != 2 {
		t.Errorf("cluster kept at %d replicas, the limit shared by %d; want both 2 (the cluster section changes only at a restart)", run.Cluster.Replicas, run.Policies[0].Replicas)
	}

	single := load(fmt.Sprintf(`{"mcpServers": {"one": {"command": "o"}}, `+limit+`}`, "replica"))
	if _, _, err := diffConfigs(single, inCluster(4)); err == nil || !strings.Contains(err.Error(), "policies[0].scope") {
		t.Errorf("a cluster-wide limit with the cluster section new in the file: error %v, want one naming policies[0].scope", err)
	}
}
