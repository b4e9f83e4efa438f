package config

import (
	"bytes"
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/mcpgate/mcpgate/internal/rawjson"
)

// Problem is one thing wrong with a config, at a field path such as
// "mcpServers.fs.command", or at a line and column for syntax errors.
type Problem struct {
	File      string
	Line, Col int // 0 when the problem is not about one place in the text
	Path      string
	Msg       string
}

func (p Problem) Error() string {
	var b strings.Builder
	if p.File != "" {
		b.WriteString(p.File)
		if p.Line > 0 {
			fmt.Fprintf(&b, ":%d:%d", p.Line, p.Col)
		}
		b.WriteString(": ")
	}
	if p.Path != "" {
		b.WriteString(p.Path)
		b.WriteString(": ")
	}
	b.WriteString(p.Msg)
	return b.String()
}

// ErrorList is every problem found in one config, in file order.
type ErrorList []Problem

func (l ErrorList) Error() string {
	lines := make([]string, len(l))
	for i, p := range l {
		lines[i] = p.Error()
	}
	return strings.Join(lines, "\n")
}

// LookupFunc finds an environment variable, like os.LookupEnv.
type LookupFunc func(name string) (string, bool)

// Keys mcpgate reads at the top level; any other top-level key belongs to
// the client whose config this is, and is ignored.
var topKeys = []string{"mcpServers", "servers", "namespace", "audit", "cache_ttl", "cache", "cache_dir", "shutdown_grace", "stop_grace", "max_backoff", "max_message_bytes", "page_size", "listen", "path", "allowed_origins", "allowed_hosts", "session_idle", "max_sessions", "auth", "policies", "pin", "start_concurrency", "cluster"}

var serverKeys = []string{"type", "command", "args", "env", "cwd", "url", "headers", "timeout", "max_timeout", "init_timeout", "disabled", "roots", "isolation", "max_instances", "idle_timeout", "tools", "prompts", "policies", "pin", "protocol", "max_concurrent", "max_queued"}

// Keys other clients put in server entries. They mean nothing to mcpgate;
// they are ignored with a warning rather than refused, so a client's own
// config file still loads.
var clientOnlyServerKeys = []string{"autoApprove", "alwaysAllow", "envFile", "dev", "description", "gallery", "version"}

var auditKeys = []string{"path", "include_bodies", "max_bytes", "max_age", "sync"}

var syncModes = []string{SyncAlways, SyncBatch, SyncNone}

var serverNameRE = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)

// Load parses and validates a config. file names the source in messages;
// lookup resolves ${VAR} references. The error, if any, is an ErrorList.
func Load(data []byte, file string, lookup LookupFunc) (*Config, error) {
	l := &loader{file: file, data: data, lookup: lookup}
	cfg := l.load()
	// Messages show values as written, with ${VAR} unexpanded; this is the
	// net under that: no message may hold a value from the environment.
	r := l.secrets.redactor()
	for i := range l.problems {
		l.problems[i].Msg = r.redact(l.problems[i].Msg)
	}
	if len(l.problems) > 0 {
		return nil, l.problems
	}
	for i := range cfg.Warnings {
		cfg.Warnings[i] = r.redact(cfg.Warnings[i])
	}
	cfg.redactor = r
	sum := sha256.Sum256(data)
	cfg.File, cfg.SHA256 = file, hex.EncodeToString(sum[:])
	return cfg, nil
}

type loader struct {
	file     string
	data     []byte
	lookup   LookupFunc
	problems ErrorList
	warnings []string
	secrets  secretSet // every value a ${VAR} expanded to
}

func (l *loader) addf(path, format string, args ...any) {
	l.problems = append(l.problems, Problem{File: l.file, Path: path, Msg: fmt.Sprintf(format, args...)})
}

func (l *loader) load() *Config {
	if p, ok := syntaxProblem(l.data); ok {
		p.File = l.file
		l.problems = append(l.problems, p)
		return nil
	}
	top, err := rawjson.Members(l.data)
	if err != nil {
		l.addf("", "%v", err)
		return nil
	}
	cfg := &Config{Namespace: true}
	serversKey := ""
	durations := map[string]*time.Duration{
		"cache_ttl":      &cfg.CacheTTL,
		"shutdown_grace": &cfg.ShutdownGrace,
		"stop_grace":     &cfg.StopGrace,
		"max_backoff":    &cfg.MaxBackoff,
		"session_idle":   &cfg.HTTP.SessionIdle,
	}
	for _, m := range top {
		if dst, ok := durations[m.Key]; ok {
			if d, ok := l.duration(m.Key, m.Value); ok {
				*dst = d
			}
			continue
		}
		switch m.Key {
		case "mcpServers", "servers":
			if serversKey != "" {
				l.addf(m.Key, `both "mcpServers" and "servers" are present; use one`)
				continue
			}
			serversKey = m.Key
			cfg.Servers = l.servers(m.Key, m.Value)
		case "namespace":
			l.decode(m.Key, m.Value, &cfg.Namespace)
		case "cache":
			on := true
			l.decode(m.Key, m.Value, &on)
			cfg.CacheOff = !on
		case "cache_dir":
			if cfg.CacheDir = l.str(m.Key, m.Value, true); cfg.CacheDir == "" {
				l.addf(m.Key, `must not be empty (leave it out for the user's cache directory, or say "cache": false)`)
			}
		case "audit":
			cfg.Audit = l.audit(m.Value)
		case "cluster":
			cfg.Cluster = l.cluster(m.Value)
		case "listen":
			cfg.HTTP.Listen = l.str(m.Key, m.Value, true)
		case "path":
			var written string
			if cfg.HTTP.Path, written = l.strWritten(m.Key, m.Value, true); !strings.HasPrefix(cfg.HTTP.Path, "/") {
				l.addf(m.Key, "must start with '/', not %q", written)
			}
		case "allowed_origins":
			cfg.HTTP.AllowedOrigins = l.strList(m.Key, m.Value)
		case "allowed_hosts":
			cfg.HTTP.AllowedHosts = l.strList(m.Key, m.Value)
		case "max_sessions":
			if l.decode(m.Key, m.Value, &cfg.HTTP.MaxSessions) && cfg.HTTP.MaxSessions < 1 {
				l.addf(m.Key, "must be at least 1")
			}
		case "auth":
			cfg.HTTP.Tokens = l.auth(m.Value)
		case "policies":
			cfg.Policies = l.policies(m.Key, m.Value)
		case "pin":
			cfg.Pin, cfg.LockPath = l.pin(m.Key, m.Value, true)
		case "page_size":
			if l.decode(m.Key, m.Value, &cfg.PageSize) && cfg.PageSize < 1 {
				l.addf(m.Key, "must be at least 1 (leave it out for one page with everything)")
			}
		case "start_concurrency":
			if l.decode(m.Key, m.Value, &cfg.StartConcurrency) && cfg.StartConcurrency < 1 {
				l.addf(m.Key, "must be at least 1 (leave it out for the default, %d)", DefaultStartConcurrency)
			}
		case "max_message_bytes":
			if l.decode(m.Key, m.Value, &cfg.MaxMessage) && cfg.MaxMessage < 1024 {
				l.addf(m.Key, "must be at least 1024")
			}
		default:
			if s := suggest(m.Key, topKeys); s != "" {
				l.warnings = append(l.warnings, fmt.Sprintf("%s: unknown top-level key ignored; did you mean %q?", m.Key, s))
			}
		}
	}
	if serversKey == "" {
		l.addf("mcpServers", "missing: the config must list the upstream servers under \"mcpServers\" (or VS Code's \"servers\")")
	}
	if !cfg.Namespace && len(cfg.Enabled()) != 1 {
		l.addf("namespace", "false is allowed only with exactly one enabled server (found %d): without prefixes, names from several servers could collide", len(cfg.Enabled()))
	}
	if !l.hasKey("policies") {
		cfg.Policies = DefaultPolicies()
	}
	l.applyCluster(cfg)
	if cfg.LockPath == "" {
		cfg.LockPath = filepath.Join(filepath.Dir(l.file), "mcpgate.lock")
	}
	if cfg.CacheDir != "" && !filepath.IsAbs(cfg.CacheDir) {
		cfg.CacheDir = filepath.Join(filepath.Dir(l.file), cfg.CacheDir)
	}
	cfg.SetDefaults()
	cfg.Warnings = l.warnings
	return cfg
}

// syntaxProblem finds the first JSON syntax error and where it is.
func syntaxProblem(data []byte) (Problem, bool) {
	var v any
	err := json.Unmarshal(data, &v)
	if err == nil {
		if _, ok := v.(map[string]any); !ok {
			return Problem{Line: 1, Col: 1, Msg: "the config must be a JSON object"}, true
		}
		return Problem{}, false
	}
	var se *json.SyntaxError
	if errors.As(err, &se) {
		line, col := position(data, int(se.Offset))
		return Problem{Line: line, Col: col, Msg: "invalid JSON: " + se.Error()}, true
	}
	return Problem{Msg: "invalid JSON: " + err.Error()}, true
}

// position turns a byte offset into a 1-based line and column.
func position(data []byte, offset int) (line, col int) {
	offset = min(offset, len(data))
	before := data[:offset]
	line = bytes.Count(before, []byte("\n")) + 1
	col = offset - (bytes.LastIndexByte(before, '\n') + 1)
	if col == 0 {
		col = 1
	}
	return line, col
}

func (l *loader) servers(key string, raw json.RawMessage) []Server {
	members, err := rawjson.Members(raw)
	if err != nil {
		l.addf(key, "must be an object mapping server names to their settings: %v", err)
		return nil
	}
	var out []Server
	for _, m := range members {
		path := key + "." + m.Key
		if s, ok := l.server(path, m.Key, m.Value); ok {
			out = append(out, s)
		}
	}
	return out
}

func (l *loader) server(path, name string, raw json.RawMessage) (Server, bool) {
	s := Server{Name: name}
	switch {
	case name == "":
		l.addf(path, "server name must not be empty")
	case !serverNameRE.MatchString(name):
		l.addf(path, "server name %q may contain only letters, digits, '-' and '_' (it prefixes every tool name)", name)
	case strings.Contains(name, "__"):
		l.addf(path, "server name %q must not contain \"__\": it separates the server from the tool in \"server__tool\"", name)
	case strings.HasSuffix(name, "_"):
		l.addf(path, "server name %q must not end in '_': \"%s__tool\" would not split back unambiguously", name, name)
	}
	members, err := rawjson.Members(raw)
	if err != nil {
		l.addf(path, "must be an object: %v", err)
		return s, false
	}
	// disabled first: a disabled server's unset variables are not errors,
	// so that switching a server off is enough to run without its secrets.
	if v, ok := members.Get("disabled"); ok {
		l.decode(path+".disabled", v, &s.Disabled)
	}
	strict := !s.Disabled
	var typ, typWritten string
	for _, m := range members {
		fpath := path + "." + m.Key
		switch m.Key {
		case "type":
			typ, typWritten = l.strWritten(fpath, m.Value, strict)
		case "command":
			s.Command = l.str(fpath, m.Value, strict)
			if s.Command == "" && strict {
				l.addf(fpath, "must not be empty")
			}
		case "args":
			var args []json.RawMessage
			if l.decode(fpath, m.Value, &args) {
				for i, a := range args {
					s.Args = append(s.Args, l.str(fmt.Sprintf("%s[%d]", fpath, i), a, strict))
				}
			}
		case "env":
			s.Env = l.strMap(fpath, m.Value, strict)
		case "cwd":
			s.Cwd = l.str(fpath, m.Value, strict)
		case "url":
			var written string
			s.URL, written = l.strWritten(fpath, m.Value, strict)
			if s.URL == "" && strict {
				l.addf(fpath, "must not be empty")
			} else if strict && !strings.HasPrefix(s.URL, "http://") && !strings.HasPrefix(s.URL, "https://") {
				l.addf(fpath, "must be an http:// or https:// URL, not %q", written)
			}
		case "headers":
			s.Headers = l.strMap(fpath, m.Value, strict)
		case "timeout":
			if d, ok := l.duration(fpath, m.Value); ok {
				s.Timeout = d
			}
		case "max_timeout":
			if d, ok := l.duration(fpath, m.Value); ok {
				s.MaxTimeout = d
			}
		case "init_timeout":
			if d, ok := l.duration(fpath, m.Value); ok {
				s.InitTimeout = d
			}
		case "roots":
			s.Roots = l.roots(fpath, m.Value, strict)
		case "isolation":
			if l.decode(fpath, m.Value, &s.Isolation) && s.Isolation != IsolationShared && s.Isolation != IsolationSession {
				l.addf(fpath, `must be %q (one instance for every client, the default) or %q (one instance per client session)`, IsolationShared, IsolationSession)
			}
		case "max_instances":
			if l.decode(fpath, m.Value, &s.MaxInstances) && s.MaxInstances < 1 {
				l.addf(fpath, "must be at least 1")
			}
		case "idle_timeout":
			if d, ok := l.duration(fpath, m.Value); ok {
				s.IdleTimeout = d
			}
		case "max_concurrent":
			if l.decode(fpath, m.Value, &s.MaxConcurrent) && s.MaxConcurrent < 1 {
				l.addf(fpath, "must be at least 1 (leave it out for no limit)")
			}
		case "max_queued":
			if l.decode(fpath, m.Value, &s.MaxQueued) && s.MaxQueued < 1 {
				l.addf(fpath, "must be at least 1 (leave it out for the default, %d)", DefaultMaxQueued)
			}
			if _, ok := members.Get("max_concurrent"); !ok {
				l.addf(fpath, "means nothing without max_concurrent, the limit requests queue for")
			}
		case "tools":
			s.Tools = l.filter(fpath, m.Value)
		case "prompts":
			s.Prompts = l.filter(fpath, m.Value)
		case "policies":
			s.Policies = l.policies(fpath, m.Value)
		case "pin":
			s.Pin, _ = l.pin(fpath, m.Value, false)
		case "protocol":
			if l.decode(fpath, m.Value, &s.Protocol) && s.Protocol != ProtocolAuto && s.Protocol != ProtocolModern && s.Protocol != ProtocolLegacy {
				l.addf(fpath, `must be %q (find the server's protocol era when connecting, the default), %q (2026-07-28, stateless) or %q (initialize)`, ProtocolAuto, ProtocolModern, ProtocolLegacy)
			}
		case "disabled":
		default:
			if contains(clientOnlyServerKeys, m.Key) {
				l.warnings = append(l.warnings, fpath+": used by other MCP clients, ignored by mcpgate")
				continue
			}
			l.unknown(fpath, m.Key, serverKeys)
		}
	}
	if timeout := cmp.Or(s.Timeout, DefaultTimeout); s.MaxTimeout != 0 && s.MaxTimeout < timeout {
		l.addf(path+".max_timeout", "%v is shorter than timeout (%v)", s.MaxTimeout, timeout)
	}
	_, hasCommand := members.Get("command")
	_, hasURL := members.Get("url")
	switch {
	case hasCommand && hasURL:
		l.addf(path, `has both "command" and "url"; a server is either a local command (stdio) or a remote URL`)
	case !hasCommand && !hasURL:
		l.addf(path, `needs "command" (a local stdio server) or "url" (a remote server)`)
	}
	switch typ {
	case "":
		s.Type = TypeStdio
		if hasURL {
			s.Type = TypeHTTP
		}
	case TypeStdio:
		s.Type = typ
		if hasURL {
			l.addf(path+".type", `"stdio" needs "command", not "url"`)
		}
	case TypeHTTP, "streamable-http", "streamableHttp":
		s.Type = TypeHTTP
		if hasCommand {
			l.addf(path+".type", `%q needs "url", not "command"`, typ)
		}
	case TypeSSE:
		s.Type = typ
		if hasCommand {
			l.addf(path+".type", `"sse" needs "url", not "command"`)
		}
	default:
		l.addf(path+".type", `must be "stdio", "http" or "sse", not %q`, typWritten)
	}
	if s.Type == TypeSSE && s.Protocol == ProtocolModern {
		l.addf(path+".protocol", `%q cannot be spoken over the older HTTP+SSE transport ("type": "sse"): it is a legacy transport`, ProtocolModern)
	}
	return s, true
}

// roots reads a list of roots: {"uri": "file:///…", "name": "…"}.
func (l *loader) roots(path string, raw json.RawMessage, strict bool) []Root {
	var elems []json.RawMessage
	if !l.decode(path, raw, &elems) {
		return nil
	}
	var out []Root
	for i, e := range elems {
		epath := fmt.Sprintf("%s[%d]", path, i)
		members, err := rawjson.Members(e)
		if err != nil {
			l.addf(epath, `must be an object like {"uri": "file:///data", "name": "data"}`)
			continue
		}
		var r Root
		var uriWritten string
		for _, m := range members {
			switch m.Key {
			case "uri":
				r.URI, uriWritten = l.strWritten(epath+".uri", m.Value, strict)
			case "name":
				r.Name = l.str(epath+".name", m.Value, strict)
			default:
				l.unknown(epath+"."+m.Key, m.Key, []string{"uri", "name"})
			}
		}
		if !strings.HasPrefix(r.URI, "file://") {
			l.addf(epath+".uri", "must be a file:// URI, not %q", uriWritten)
		}
		out = append(out, r)
	}
	return out
}

func (l *loader) strList(path string, raw json.RawMessage) []string {
	var elems []json.RawMessage
	if !l.decode(path, raw, &elems) {
		return nil
	}
	out := []string{}
	for i, e := range elems {
		out = append(out, l.str(fmt.Sprintf("%s[%d]", path, i), e, true))
	}
	return out
}

// auth reads {"tokens": ["${MCPGATE_TOKEN}"]}.
func (l *loader) auth(raw json.RawMessage) []string {
	members, err := rawjson.Members(raw)
	if err != nil {
		l.addf("auth", "must be an object: %v", err)
		return nil
	}
	var tokens []string
	for _, m := range members {
		path := "auth." + m.Key
		switch m.Key {
		case "tokens":
			tokens = l.strList(path, m.Value)
			for i, t := range tokens {
				if len(t) < 16 {
					l.addf(fmt.Sprintf("%s[%d]", path, i), "a token must be at least 16 characters (generate one with: openssl rand -hex 32)")
				}
			}
		default:
			l.unknown(path, m.Key, []string{"tokens"})
		}
	}
	return tokens
}

func (l *loader) audit(raw json.RawMessage) Audit {
	var a Audit
	members, err := rawjson.Members(raw)
	if err != nil {
		l.addf("audit", "must be an object: %v", err)
		return a
	}
	for _, m := range members {
		path := "audit." + m.Key
		switch m.Key {
		case "path":
			a.Path = l.str(path, m.Value, true)
			if a.Path == "" {
				l.addf(path, "must not be empty (leave out the audit section for no audit trail)")
			}
		case "include_bodies":
			l.decode(path, m.Value, &a.IncludeBodies)
		case "max_bytes":
			if l.decode(path, m.Value, &a.MaxBytes) && a.MaxBytes < MinAuditMaxBytes {
				l.addf(path, "must be at least %d (leave it out for no limit)", MinAuditMaxBytes)
			}
		case "max_age":
			if d, ok := l.duration(path, m.Value); ok {
				a.MaxAge = d
			}
		case "sync":
			if l.decode(path, m.Value, &a.Sync) && !contains(syncModes, a.Sync) {
				l.addf(path, "%s", badChoice(a.Sync, syncModes))
			}
		default:
			l.unknown(path, m.Key, auditKeys)
		}
	}
	if _, ok := members.Get("path"); !ok {
		l.addf("audit.path", "missing: where to write the audit trail")
	}
	return a
}

// badChoice says that value is not one of choices, suggesting the closest.
func badChoice(value string, choices []string) string {
	quoted := make([]string, len(choices))
	for i, c := range choices {
		quoted[i] = strconv.Quote(c)
	}
	msg := fmt.Sprintf("%q is not one of %s", value, strings.Join(quoted, ", "))
	if s := suggest(value, choices); s != "" {
		msg += fmt.Sprintf("; did you mean %q?", s)
	}
	return msg
}

func (l *loader) unknown(path, key string, known []string) {
	if s := suggest(key, known); s != "" {
		l.addf(path, "unknown field; did you mean %q?", s)
		return
	}
	l.addf(path, "unknown field (known: %s)", strings.Join(known, ", "))
}

// decode reads a value of a fixed JSON type into v, reporting a mismatch.
func (l *loader) decode(path string, raw json.RawMessage, v any) bool {
	if err := json.Unmarshal(raw, v); err != nil {
		l.addf(path, "must be %s, not %s", jsonKind(v), describe(raw))
		return false
	}
	return true
}

func jsonKind(v any) string {
	switch v.(type) {
	case *bool:
		return "true or false"
	case *int, *int64:
		return "a whole number"
	case *[]json.RawMessage:
		return "an array"
	default:
		return "a string"
	}
}

func describe(raw json.RawMessage) string {
	switch raw[0] {
	case '"':
		return "a string"
	case '{':
		return "an object"
	case '[':
		return "an array"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	default:
		return "a number"
	}
}

// str reads a string and expands ${VAR} in it. With strict false, unset
// variables are left as they are instead of being errors.
func (l *loader) str(path string, raw json.RawMessage, strict bool) string {
	s, _ := l.strWritten(path, raw, strict)
	return s
}

// strWritten is str that also returns the string as written, ${VAR}s and
// all: what a message about the value shows, since the expanded value may
// be a secret.
func (l *loader) strWritten(path string, raw json.RawMessage, strict bool) (value, written string) {
	if !l.decode(path, raw, &written) {
		return "", ""
	}
	out, err := expand(written, l.lookup, l.secrets.add)
	if err != nil {
		if strict {
			l.addf(path, "%v", err)
		}
		return written, written
	}
	return out, written
}

func (l *loader) strMap(path string, raw json.RawMessage, strict bool) map[string]string {
	members, err := rawjson.Members(raw)
	if err != nil {
		l.addf(path, "must be an object of strings: %v", err)
		return nil
	}
	out := make(map[string]string, len(members))
	for _, m := range members {
		out[m.Key] = l.str(path+"."+m.Key, m.Value, strict)
	}
	return out
}

// duration reads a Go duration string ("30s", "2m") or, as some clients
// write it, a number of seconds.
func (l *loader) duration(path string, raw json.RawMessage) (time.Duration, bool) {
	var d time.Duration
	if raw[0] != '"' {
		var secs float64
		if json.Unmarshal(raw, &secs) != nil {
			l.addf(path, `must be a duration such as "30s", not %s`, describe(raw))
			return 0, false
		}
		d = time.Duration(secs * float64(time.Second))
	} else {
		s, written := l.strWritten(path, raw, true)
		var err error
		if d, err = time.ParseDuration(s); err != nil {
			l.addf(path, `%q is not a duration; write it like "30s" or "2m"`, written)
			return 0, false
		}
	}
	if d <= 0 {
		l.addf(path, "must be positive")
		return 0, false
	}
	return d, true
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// suggest returns the known key closest to key, if it is close enough to be
// a typo (or differs only in case).
func suggest(key string, known []string) string {
	type cand struct {
		k string
		d int
	}
	var cs []cand
	for _, k := range known {
		d := distance(strings.ToLower(key), strings.ToLower(k))
		if d <= 2 && d < len(k)/2+1 {
			cs = append(cs, cand{k, d})
		}
	}
	if len(cs) == 0 {
		return ""
	}
	sort.SliceStable(cs, func(i, j int) bool { return cs[i].d < cs[j].d })
	return cs[0].k
}

// distance is the Levenshtein edit distance.
func distance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
