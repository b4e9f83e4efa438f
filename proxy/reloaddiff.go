package proxy

import (
	"fmt"
	"reflect"

	"github.com/mcpgate/mcpgate/config"
)

// Changes is what a Reload changed, by server name and config key; never a
// value (a setting may hold a secret).
type Changes struct {
	// Added, Removed and Changed name servers: started; stopped once the
	// requests routed to them had ended; restarted with new settings.
	Added   []string `json:"added"`
	Removed []string `json:"removed"`
	Changed []string `json:"changed"`
	// Settings changed and apply now: gateway settings by their key
	// ("page_size", "policies"), and what of a kept server applies without
	// a restart ("mcpServers.fs.policies", ".tools", ".prompts", ".pin").
	Settings []string `json:"settings"`
	// NeedRestart are settings that changed in the config but keep their
	// old value until mcpgate restarts ("listen", "audit.path", …).
	NeedRestart []string `json:"restart_needed"`
	// Config and SHA256 name the config now in force.
	Config string `json:"config,omitempty"`
	SHA256 string `json:"config_sha256,omitempty"`
}

// setting is one gateway setting: its config key, and where it is in a
// Config (a pointer to the field).
type setting struct {
	key   string
	field func(*config.Config) any
}

// value is the setting's value in c.
func (s setting) value(c *config.Config) any { return reflect.ValueOf(s.field(c)).Elem().Interface() }

// liveSettings change while mcpgate runs: whoever needs them reads the
// live config each time.
var liveSettings = []setting{
	{"cache_ttl", func(c *config.Config) any { return &c.CacheTTL }},
	{"stop_grace", func(c *config.Config) any { return &c.StopGrace }},
	{"max_backoff", func(c *config.Config) any { return &c.MaxBackoff }},
	{"shutdown_grace", func(c *config.Config) any { return &c.ShutdownGrace }},
	{"page_size", func(c *config.Config) any { return &c.PageSize }},
	{"policies", func(c *config.Config) any { return &c.Policies }},
	{"pin", func(c *config.Config) any { return &c.Pin }},
	{"pin.lock", func(c *config.Config) any { return &c.LockPath }},
	{"audit.include_bodies", func(c *config.Config) any { return &c.Audit.IncludeBodies }},
}

// restartSettings are read once, when what they shape is made: the
// listener and the HTTP front, the audit file, the client's stream (sized
// by max_message_bytes), the names clients already hold (namespace).
var restartSettings = []setting{
	{"namespace", func(c *config.Config) any { return &c.Namespace }},
	{"max_message_bytes", func(c *config.Config) any { return &c.MaxMessage }},
	{"start_concurrency", func(c *config.Config) any { return &c.StartConcurrency }},
	{"cluster", func(c *config.Config) any { return &c.Cluster }},
	{"cache", func(c *config.Config) any { return &c.CacheOff }},
	{"cache_dir", func(c *config.Config) any { return &c.CacheDir }},
	{"listen", func(c *config.Config) any { return &c.HTTP.Listen }},
	{"path", func(c *config.Config) any { return &c.HTTP.Path }},
	{"allowed_origins", func(c *config.Config) any { return &c.HTTP.AllowedOrigins }},
	{"allowed_hosts", func(c *config.Config) any { return &c.HTTP.AllowedHosts }},
	{"session_idle", func(c *config.Config) any { return &c.HTTP.SessionIdle }},
	{"max_sessions", func(c *config.Config) any { return &c.HTTP.MaxSessions }},
	{"auth", func(c *config.Config) any { return &c.HTTP.Tokens }},
	{"audit.path", func(c *config.Config) any { return &c.Audit.Path }},
	{"audit.max_bytes", func(c *config.Config) any { return &c.Audit.MaxBytes }},
	{"audit.max_age", func(c *config.Config) any { return &c.Audit.MaxAge }},
	{"audit.sync", func(c *config.Config) any { return &c.Audit.Sync }},
	{"cluster.replica", func(c *config.Config) any { return &c.Audit.Replica }}, // the audit file's name
}

// same compares two settings as they print: maps in key order, regular
// expressions by their pattern, durations by their value. (reflect.DeepEqual
// would compare compiled regular expressions by their insides.)
func same(a, b any) bool { return fmt.Sprintf("%+v", a) == fmt.Sprintf("%+v", b) }

// diffConfigs compares the config in force with a new one, both with their
// defaults filled in. It returns what changed, and the config to run: the
// new one, with the settings that cannot change while mcpgate runs as they
// were. The error, a config.ErrorList, says why the new config cannot run
// beside what must stay.
func diffConfigs(old, next *config.Config) (Changes, *config.Config, error) {
	run := *next
	run.Servers = append([]config.Server(nil), next.Servers...)
	ch := Changes{Added: []string{}, Removed: []string{}, Changed: []string{}, Settings: []string{}, NeedRestart: []string{}, Config: next.File, SHA256: next.SHA256}
	for _, s := range liveSettings {
		if !same(s.value(old), s.value(next)) {
			ch.Settings = append(ch.Settings, s.key)
		}
	}
	for _, s := range restartSettings {
		if !same(s.value(old), s.value(next)) {
			ch.NeedRestart = append(ch.NeedRestart, s.key)
			reflect.ValueOf(s.field(&run)).Elem().Set(reflect.ValueOf(s.field(old)).Elem())
		}
	}

	before := map[string]config.Server{}
	for _, s := range old.Enabled() {
		before[s.Name] = s
	}
	now := map[string]bool{}
	for _, s := range run.Enabled() {
		now[s.Name] = true
		was, ok := before[s.Name]
		switch {
		case !ok:
			ch.Added = append(ch.Added, s.Name)
		case !sameConnection(was, s):
			ch.Changed = append(ch.Changed, s.Name)
		default:
			for _, f := range []struct {
				key      string
				was, now any
			}{{"policies", was.Policies, s.Policies}, {"tools", was.Tools, s.Tools}, {"prompts", was.Prompts, s.Prompts}, {"pin", was.Pin, s.Pin}} {
				if !same(f.was, f.now) {
					ch.Settings = append(ch.Settings, "mcpServers."+s.Name+"."+f.key)
				}
			}
		}
	}
	for _, s := range old.Enabled() {
		if !now[s.Name] {
			ch.Removed = append(ch.Removed, s.Name)
		}
	}
	if err := keepClusterShares(&run, next.File); err != nil {
		return Changes{}, nil, err
	}
	if n := len(run.Enabled()); !run.Namespace && n != 1 {
		return Changes{}, nil, config.ErrorList{{File: next.File, Path: "namespace",
			Msg: fmt.Sprintf("false stays in force until mcpgate restarts, and allows exactly one server, not %d: keep one server until then, or restart mcpgate", n)}}
	}
	return ch, &run, nil
}

// sameConnection reports whether a server's settings differ only in what
// applies to it while it runs (its policies, filters and pin): if not, it
// is restarted.
func sameConnection(a, b config.Server) bool {
	for _, s := range []*config.Server{&a, &b} {
		s.Policies, s.Pin, s.Tools, s.Prompts = nil, "", config.Filter{}, config.Filter{}
	}
	return same(a, b)
}

// samePolicies reports whether what makes a kept server's policies is as
// it was: the policies that apply to it, its filters and pin, the pinned
// definitions.
func samePolicies(oldCfg *config.Config, was config.Server, cfg *config.Config, s config.Server, oldSP, sp *serverPolicies) bool {
	if (oldSP == nil) != (sp == nil) {
		return false
	}
	if oldSP != nil && !oldSP.lock.Same(sp.lock) { // not DeepEqual: a lock remembers its answers
		return false
	}
	return same(oldCfg.EffectivePolicies(was), cfg.EffectivePolicies(s)) && oldCfg.EffectivePin(was) == cfg.EffectivePin(s) &&
		same(was.Tools, s.Tools) && same(was.Prompts, s.Prompts)
}

// keepClusterShares gives the rate limits declared for the whole cluster
// the share of the cluster section in force, which a reload keeps: the new
// file's replica count must not divide a limit while the old one stands.
func keepClusterShares(run *config.Config, file string) error {
	var problems config.ErrorList
	fix := func(list []config.Policy) []config.Policy {
		list = append([]config.Policy(nil), list...) // shared with the loaded config
		for i := range list {
			p := &list[i]
			if p.Scope != config.ScopeCluster {
				continue
			}
			if run.Cluster.Replica == "" {
				problems = append(problems, config.Problem{File: file, Path: p.Path + ".scope",
					Msg: `"cluster" needs the cluster section, and one added to the config takes effect only when mcpgate restarts: restart mcpgate, or use "replica" until then`})
				continue
			}
			p.Replicas = run.Cluster.Replicas
		}
		return list
	}
	run.Policies = fix(run.Policies)
	for i := range run.Servers {
		run.Servers[i].Policies = fix(run.Servers[i].Policies)
	}
	if len(problems) > 0 {
		return problems
	}
	return nil
}
