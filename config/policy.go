package config

import (
	"encoding/json"
	"fmt"
	"path"
	"regexp"
	"strings"
	"time"

	"github.com/mcpgate/mcpgate/internal/rawjson"
)

// Policy is one entry of a "policies" list, at the top level (for every
// server) or in a server's entry (replacing the top-level entry of the same
// name, or switching it off with "enabled": false). Which fields a policy
// reads is its own business; Load checks that each entry has only the keys
// its policy takes, with values of the right type.
type Policy struct {
	Name    string // "secrets", "pii", "injection", "poisoning", "paths", "args", "rate_limit", "exec"
	Path    string // where it is written ("policies[1]", "mcpServers.fs.policies[0]"), for messages
	Enabled bool   // false: switched off here (a server's entry turning a global one off)
	Action  string // "block", "redact" or "audit"; "" for the policy's default
	On      []string

	Args  []string // paths: the arguments that hold paths
	Allow []string // paths: the roots they may be under
	URIs  bool     // paths: resources/read URIs too

	Rules []ArgRule // args

	Kinds       []string // secrets, pii, injection: the kinds to look for; nil: all
	HighEntropy bool     // secrets: generic high-entropy strings too (audit only)
	AllIPs      bool     // pii: private and reserved addresses too

	Per   string  // rate_limit: "session", "server" or "tool"
	Rate  float64 // rate_limit: requests per second, sustained
	Burst int     // rate_limit: requests at once; 0: Rate rounded up (at least 1)
	// rate_limit: ScopeReplica, or ScopeCluster when Rate and Burst are for
	// the whole cluster, each of its Replicas enforcing its share.
	Scope    string
	Replicas int

	Command  string        // exec: the program
	ExecArgs []string      // exec: its arguments ("args")
	Timeout  time.Duration // exec: how long a decision may take
	OnError  string        // exec: "deny" or "allow" when the program fails
	Mode     string        // exec: "per_decision" (one run each) or "persistent" (a line protocol)
}

// ArgRule is one rule of the args policy: for the tools its glob matches,
// the named argument must (allow) or must not (deny) match a regular
// expression, and be at most MaxLength characters long.
type ArgRule struct {
	Path      string
	Tool      string // a glob over the server's own tool names
	Arg       string
	Allow     *regexp.Regexp
	Deny      *regexp.Regexp
	MaxLength int
}

// Filter says which of a server's tools (or prompts) clients may see and
// call, under which names and with which descriptions. Names are the
// server's own.
type Filter struct {
	Allow    []string          // globs; nil: all
	Deny     []string          // globs, over Allow
	Rename   map[string]string // the name clients see (then prefixed as usual)
	Describe map[string]string // the description clients see
}

// Empty reports whether the filter changes nothing.
func (f Filter) Empty() bool {
	return f.Allow == nil && f.Deny == nil && len(f.Rename) == 0 && len(f.Describe) == 0
}

// Allows reports whether the filter lets the server's item name through.
func (f Filter) Allows(name string) bool {
	if f.Allow != nil && !matchAny(f.Allow, name) {
		return false
	}
	return !matchAny(f.Deny, name)
}

func matchAny(globs []string, name string) bool {
	for _, g := range globs {
		if ok, _ := path.Match(g, name); ok {
			return true
		}
	}
	return false
}

// Policy names, and the keys each takes besides "policy" and "enabled".
var policyKeys = map[string][]string{
	"secrets":    {"action", "on", "kinds", "high_entropy"},
	"pii":        {"action", "on", "kinds", "all_ips"},
	"injection":  {"action", "on", "kinds"},
	"poisoning":  {"action", "kinds"},
	"paths":      {"action", "args", "allow", "uris"},
	"args":       {"action", "rules"},
	"rate_limit": {"per", "rate", "burst", "scope"},
	"exec":       {"command", "args", "timeout", "on_error", "mode", "on"},
}

// policyActions are the actions each policy takes; the first is its default.
var policyActions = map[string][]string{
	"secrets":   {"redact", "block", "audit"},
	"pii":       {"redact", "block", "audit"},
	"injection": {"audit", "block"},
	"poisoning": {"audit", "block"},
	"paths":     {"block", "audit"},
	"args":      {"block", "audit"},
}

// policyStages are where each policy may act ("on"); the first ones listed
// in policyStageDefaults are where it acts unless told.
var policyStages = map[string][]string{
	"secrets":   {"requests", "results"},
	"pii":       {"requests", "results"},
	"injection": {"results", "requests"},
	"exec":      {"requests", "results", "lists"},
}

var policyStageDefaults = map[string][]string{
	"secrets":   {"requests", "results"},
	"pii":       {"requests", "results"},
	"injection": {"results"},
	"exec":      {"requests"},
}

// PolicyNames are the built-in policies, sorted.
func PolicyNames() []string {
	return []string{"args", "exec", "injection", "paths", "pii", "poisoning", "rate_limit", "secrets"}
}

// DefaultAction is the action a policy takes when its entry names none.
func DefaultAction(policy string) string {
	if a := policyActions[policy]; len(a) > 0 {
		return a[0]
	}
	return ""
}

// policies reads a "policies" list.
func (l *loader) policies(at string, raw json.RawMessage) []Policy {
	var elems []json.RawMessage
	if !l.decode(at, raw, &elems) {
		return nil
	}
	var out []Policy
	seen := map[string]string{}
	for i, e := range elems {
		epath := fmt.Sprintf("%s[%d]", at, i)
		p, ok := l.policy(epath, e)
		if !ok {
			continue
		}
		if first, dup := seen[p.Name]; dup {
			l.addf(epath, "policy %q is already in this list at %s; a list has one entry per policy", p.Name, first)
			continue
		}
		seen[p.Name] = epath
		out = append(out, p)
	}
	return out
}

func (l *loader) policy(at string, raw json.RawMessage) (Policy, bool) {
	members, err := rawjson.Members(raw)
	if err != nil {
		l.addf(at, `must be an object like {"policy": "secrets", "action": "redact"}`)
		return Policy{}, false
	}
	p := Policy{Path: at, Enabled: true}
	name, ok := members.Get("policy")
	if !ok || !l.decode(at+".policy", name, &p.Name) {
		if !ok {
			l.addf(at+".policy", "missing: which policy (one of %s)", strings.Join(PolicyNames(), ", "))
		}
		return Policy{}, false
	}
	keys, known := policyKeys[p.Name]
	if !known {
		if s := suggest(p.Name, PolicyNames()); s != "" {
			l.addf(at+".policy", "unknown policy %q; did you mean %q?", p.Name, s)
		} else {
			l.addf(at+".policy", "unknown policy %q (known: %s)", p.Name, strings.Join(PolicyNames(), ", "))
		}
		return Policy{}, false
	}
	for _, m := range members {
		fpath := at + "." + m.Key
		switch {
		case m.Key == "policy":
		case m.Key == "enabled":
			l.decode(fpath, m.Value, &p.Enabled)
		case !contains(keys, m.Key):
			l.unknown(fpath, m.Key, append([]string{"policy", "enabled"}, keys...))
		default:
			l.policyOption(&p, fpath, m.Key, m.Value)
		}
	}
	if p.Action == "" {
		p.Action = DefaultAction(p.Name)
	}
	if p.On == nil {
		p.On = policyStageDefaults[p.Name]
	}
	l.checkPolicy(&p, members)
	return p, true
}

func (l *loader) policyOption(p *Policy, fpath, key string, raw json.RawMessage) {
	switch key {
	case "action":
		var a string
		if l.decode(fpath, raw, &a) {
			if !contains(policyActions[p.Name], a) {
				l.addf(fpath, "%s takes %s, not %q", p.Name, orList(policyActions[p.Name]), a)
			}
			p.Action = a
		}
	case "on":
		p.On = l.strList(fpath, raw)
		for i, s := range p.On {
			if !contains(policyStages[p.Name], s) {
				l.addf(fmt.Sprintf("%s[%d]", fpath, i), "%s acts on %s, not %q", p.Name, orList(policyStages[p.Name]), s)
			}
		}
	case "args":
		if p.Name == "exec" {
			p.ExecArgs = l.strList(fpath, raw)
		} else {
			p.Args = l.strList(fpath, raw)
		}
	case "allow":
		p.Allow = l.strList(fpath, raw)
	case "uris":
		l.decode(fpath, raw, &p.URIs)
	case "rules":
		p.Rules = l.argRules(fpath, raw)
	case "kinds":
		p.Kinds = l.strList(fpath, raw)
	case "high_entropy":
		l.decode(fpath, raw, &p.HighEntropy)
	case "all_ips":
		l.decode(fpath, raw, &p.AllIPs)
	case "per":
		var per string
		if l.decode(fpath, raw, &per) {
			if per != "session" && per != "server" && per != "tool" {
				l.addf(fpath, `must be "session", "server" or "tool", not %q`, per)
			}
			p.Per = per
		}
	case "rate":
		if l.decode(fpath, raw, &p.Rate) && p.Rate <= 0 {
			l.addf(fpath, "must be a positive number of requests per second")
		}
	case "burst":
		if l.decode(fpath, raw, &p.Burst) && p.Burst < 1 {
			l.addf(fpath, "must be at least 1")
		}
	case "scope":
		l.checkScope(p, fpath, raw)
	case "command":
		p.Command = l.str(fpath, raw, true)
	case "timeout":
		if d, ok := l.duration(fpath, raw); ok {
			p.Timeout = d
		}
	case "on_error":
		if l.decode(fpath, raw, &p.OnError) && p.OnError != "deny" && p.OnError != "allow" {
			l.addf(fpath, `must be "deny" or "allow", not %q`, p.OnError)
		}
	case "mode":
		if l.decode(fpath, raw, &p.Mode) && p.Mode != "per_decision" && p.Mode != "persistent" {
			l.addf(fpath, `must be "per_decision" (the program runs once per decision) or "persistent" (it keeps running and answers a line per decision), not %q`, p.Mode)
		}
	}
}

// checkPolicy checks what one key alone cannot: the keys a policy needs.
func (l *loader) checkPolicy(p *Policy, members rawjson.MemberList) {
	need := func(key, what string) {
		if _, ok := members.Get(key); !ok && p.Enabled {
			l.addf(p.Path+"."+key, "missing: %s", what)
		}
	}
	switch p.Name {
	case "paths":
		need("args", `the arguments that hold paths, like ["path", "source"]`)
		need("allow", `the roots they must be under, like ["/data"]`)
	case "args":
		need("rules", `[{"tool": "run_query", "arg": "sql", "deny": "(?i)\\bdrop\\b", "max_length": 4000}]`)
	case "rate_limit":
		need("per", `"session", "server" or "tool"`)
		need("rate", "requests per second")
		if p.Burst == 0 {
			p.Burst = max(1, int(p.Rate+0.999))
		}
		if p.Scope == "" {
			p.Scope = ScopeReplica
		}
	case "exec":
		need("command", "the program that decides")
		if p.Timeout == 0 {
			p.Timeout = 5 * time.Second
		}
		if p.OnError == "" {
			p.OnError = "deny"
		}
		if p.Mode == "" {
			p.Mode = "per_decision"
		}
	}
}

// argRules reads the args policy's rules.
func (l *loader) argRules(at string, raw json.RawMessage) []ArgRule {
	var elems []json.RawMessage
	if !l.decode(at, raw, &elems) {
		return nil
	}
	var out []ArgRule
	for i, e := range elems {
		rpath := fmt.Sprintf("%s[%d]", at, i)
		members, err := rawjson.Members(e)
		if err != nil {
			l.addf(rpath, `must be an object like {"tool": "run_query", "arg": "sql", "deny": "(?i)\\bdrop\\b"}`)
			continue
		}
		r := ArgRule{Path: rpath, Tool: "*"}
		for _, m := range members {
			fpath := rpath + "." + m.Key
			switch m.Key {
			case "tool":
				if l.decode(fpath, m.Value, &r.Tool) {
					if _, err := path.Match(r.Tool, ""); err != nil {
						l.addf(fpath, "%q is not a valid glob: %v", r.Tool, err)
					}
				}
			case "arg":
				l.decode(fpath, m.Value, &r.Arg)
			case "allow", "deny":
				var expr string
				if !l.decode(fpath, m.Value, &expr) {
					continue
				}
				re, err := regexp.Compile(expr)
				if err != nil {
					l.addf(fpath, "not a regular expression: %v", err)
					continue
				}
				if m.Key == "allow" {
					r.Allow = re
				} else {
					r.Deny = re
				}
			case "max_length":
				if l.decode(fpath, m.Value, &r.MaxLength) && r.MaxLength < 1 {
					l.addf(fpath, "must be at least 1")
				}
			default:
				l.unknown(fpath, m.Key, []string{"tool", "arg", "allow", "deny", "max_length"})
			}
		}
		if r.Arg == "" {
			l.addf(rpath+".arg", "missing: the argument the rule is about")
		}
		if r.Allow == nil && r.Deny == nil && r.MaxLength == 0 {
			l.addf(rpath, `says nothing: give "allow", "deny" or "max_length"`)
		}
		out = append(out, r)
	}
	return out
}

// filter reads a server's "tools" or "prompts" section.
func (l *loader) filter(at string, raw json.RawMessage) Filter {
	members, err := rawjson.Members(raw)
	if err != nil {
		l.addf(at, `must be an object like {"allow": ["read_*"], "deny": ["write_file"]}`)
		return Filter{}
	}
	var f Filter
	for _, m := range members {
		fpath := at + "." + m.Key
		switch m.Key {
		case "allow", "deny":
			globs := l.strList(fpath, m.Value)
			for i, g := range globs {
				if _, err := path.Match(g, ""); err != nil {
					l.addf(fmt.Sprintf("%s[%d]", fpath, i), "%q is not a valid glob: %v", g, err)
				}
			}
			if m.Key == "allow" {
				f.Allow = globs
			} else {
				f.Deny = globs
			}
		case "rename":
			f.Rename = l.strMap(fpath, m.Value, true)
		case "describe":
			f.Describe = l.strMap(fpath, m.Value, true)
		default:
			l.unknown(fpath, m.Key, []string{"allow", "deny", "rename", "describe"})
		}
	}
	return f
}

func orList(words []string) string {
	q := make([]string, len(words))
	for i, w := range words {
		q[i] = fmt.Sprintf("%q", w)
	}
	if len(q) < 2 {
		return strings.Join(q, "")
	}
	return strings.Join(q[:len(q)-1], ", ") + " or " + q[len(q)-1]
}

// EffectivePolicies is the list of policies that apply to server s: the
// top level's, in order, with s's own entries replacing those of the same
// name (or switching them off) and its other entries after them.
func (c *Config) EffectivePolicies(s Server) []Policy {
	own := map[string]Policy{}
	for _, p := range s.Policies {
		own[p.Name] = p
	}
	var out []Policy
	for _, p := range c.Policies {
		if o, ok := own[p.Name]; ok {
			p = o
			delete(own, p.Name)
		}
		if p.Enabled {
			out = append(out, p)
		}
	}
	for _, p := range s.Policies {
		if _, ok := own[p.Name]; ok && p.Enabled {
			out = append(out, p)
		}
	}
	return out
}

// pin reads "pin": true, false, "warn", or (at the top level) an object
// {"lock": "path", "warn": true}.
func (l *loader) pin(at string, raw json.RawMessage, top bool) (mode, lock string) {
	switch {
	case string(raw) == "true":
		return PinOn, ""
	case string(raw) == "false":
		return PinOff, ""
	case raw[0] == '"':
		var s string
		json.Unmarshal(raw, &s)
		if s != PinWarn {
			l.addf(at, `must be true, false or "warn", not %q`, s)
		}
		return PinWarn, ""
	case raw[0] == '{' && top:
		members, err := rawjson.Members(raw)
		if err != nil {
			l.addf(at, "%v", err)
			return "", ""
		}
		mode = PinOn
		for _, m := range members {
			fpath := at + "." + m.Key
			switch m.Key {
			case "lock":
				lock = l.str(fpath, m.Value, true)
			case "warn":
				var warn bool
				if l.decode(fpath, m.Value, &warn) && warn {
					mode = PinWarn
				}
			default:
				l.unknown(fpath, m.Key, []string{"lock", "warn"})
			}
		}
		return mode, lock
	}
	if top {
		l.addf(at, `must be true, false, "warn" or {"lock": "path"}, not %s`, describe(raw))
	} else {
		l.addf(at, `must be true, false or "warn", not %s`, describe(raw))
	}
	return "", ""
}

// DefaultPolicies are what applies when the config has no "policies" key:
// secrets redacted in requests and results, prompt injection in results
// and tool poisoning in lists recorded (the audit trail and the metrics
// show them; nothing is changed). "policies": [] switches all off.
func DefaultPolicies() []Policy {
	return []Policy{
		{Name: "secrets", Path: "policies (default)", Enabled: true, Action: "redact", On: []string{"requests", "results"}},
		{Name: "injection", Path: "policies (default)", Enabled: true, Action: "audit", On: []string{"results"}},
		{Name: "poisoning", Path: "policies (default)", Enabled: true, Action: "audit"},
	}
}

// hasKey reports whether the config's top level has key.
func (l *loader) hasKey(key string) bool {
	top, err := rawjson.Members(l.data)
	if err != nil {
		return false
	}
	_, ok := top.Get(key)
	return ok
}
