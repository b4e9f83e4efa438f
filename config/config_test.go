package config

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func env(m map[string]string) LookupFunc {
	return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
}

func TestExpand(t *testing.T) {
	lookup := env(map[string]string{"TOKEN": "s3cret", "EMPTY": "", "HOST": "example.com"})
	tests := []struct{ in, want, err string }{
		{in: "plain", want: "plain"},
		{in: "Bearer ${TOKEN}", want: "Bearer s3cret"},
		{in: "https://${HOST}/${TOKEN}", want: "https://example.com/s3cret"},
		{in: "${MISSING:-fallback}", want: "fallback"},
		{in: "${EMPTY:-fallback}", want: "fallback"},
		{in: "${EMPTY}", want: ""},
		{in: "$${TOKEN} and $HOME", want: "${TOKEN} and $HOME"},
		{in: "${MISSING}", err: "${MISSING} is not set"},
		{in: "${TOKEN", err: "unterminated"},
		{in: "${1BAD}", err: "is not a variable name"},
	}
	for _, tt := range tests {
		got, err := Expand(tt.in, lookup)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("Expand(%q) error = %v, want %q", tt.in, err, tt.err)
			}
			if err != nil && strings.Contains(err.Error(), "s3cret") {
				t.Errorf("Expand(%q) error leaks a value: %v", tt.in, err)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("Expand(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
}

func TestLoad(t *testing.T) {
	data := `{
	  "mcpServers": {
	    "zeta": {"command": "z", "args": ["-v", "${HOME_DIR}"], "timeout": "30s"},
	    "alpha": {"url": "https://a.example/mcp", "headers": {"Authorization": "Bearer ${TOK}"}, "timeout": 5},
	    "off": {"command": "x", "disabled": true}
	  },
	  "audit": {"path": "a.jsonl", "include_bodies": true},
	  "namspace": true
	}`
	cfg, err := Load([]byte(data), "c.json", env(map[string]string{"HOME_DIR": "/h", "TOK": "t"}))
	if err != nil {
		t.Fatal(err)
	}
	// config order, not alphabetical: it orders every merged list
	if len(cfg.Servers) != 3 || cfg.Servers[0].Name != "zeta" || cfg.Servers[1].Name != "alpha" {
		t.Fatalf("servers = %+v", cfg.Servers)
	}
	z, a := cfg.Servers[0], cfg.Servers[1]
	if z.Type != TypeStdio || z.Args[1] != "/h" || z.Timeout != 30*time.Second {
		t.Errorf("zeta = %+v", z)
	}
	if a.Type != TypeHTTP || a.Headers["Authorization"] != "Bearer t" || a.Timeout != 5*time.Second {
		t.Errorf("alpha = %+v", a)
	}
	if len(cfg.Enabled()) != 2 || !cfg.Namespace || !cfg.Audit.IncludeBodies {
		t.Errorf("enabled = %d, namespace = %v, audit = %+v", len(cfg.Enabled()), cfg.Namespace, cfg.Audit)
	}
	if len(cfg.Warnings) != 1 || !strings.Contains(cfg.Warnings[0], `did you mean "namespace"`) {
		t.Errorf("warnings = %q", cfg.Warnings)
	}
}

func TestLoadReportsEveryProblem(t *testing.T) {
	_, err := Load([]byte(`{"mcpServers": {"a": {"comand": "x"}, "b__c": {"command": ""}}}`), "c.json", env(nil))
	var list ErrorList
	if !errors.As(err, &list) {
		t.Fatalf("error %v is not an ErrorList", err)
	}
	want := []string{
		"c.json: mcpServers.a.comand: unknown field; did you mean \"command\"?",
		"c.json: mcpServers.a: needs \"command\" (a local stdio server) or \"url\" (a remote server)",
		"c.json: mcpServers.b__c: server name \"b__c\" must not contain \"__\": it separates the server from the tool in \"server__tool\"",
		"c.json: mcpServers.b__c.command: must not be empty",
	}
	if len(list) != len(want) {
		t.Fatalf("got %d problems:\n%v", len(list), err)
	}
	for i, p := range list {
		if p.Error() != want[i] {
			t.Errorf("problem %d = %s\nwant        %s", i, p, want[i])
		}
	}
}

func FuzzLoad(f *testing.F) {
	f.Add([]byte(`{"mcpServers":{"a":{"command":"x","args":["${A:-b}"],"env":{"K":"${K}"}}},"audit":{"path":"p"}}`))
	f.Add([]byte(`{"servers":{"a":{"url":"https://x","type":"sse","timeout":"1s"}},"namespace":false}`))
	f.Add([]byte(`{"mcpServers":{"a":{"command":"x",}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		cfg, err := Load(data, "f.json", env(map[string]string{"A": "1"}))
		if err == nil {
			for _, s := range cfg.Servers {
				if (s.Command == "") == (s.URL == "") && !s.Disabled {
					t.Fatalf("valid config with server %q that has both or neither of command and url", s.Name)
				}
				if strings.Contains(s.Name, "__") || s.Timeout <= 0 {
					t.Fatalf("valid config with bad server %+v", s)
				}
			}
		}
	})
}

func TestRedact(t *testing.T) {
	data := `{"mcpServers": {
	  "a": {"url": "https://${HOST}/${TOKEN}/mcp", "headers": {"X-Key": "${KEY}"}},
	  "b": {"command": "${BIN}", "args": ["${SHORT}", "${UNSET:-default-value}"]}
	}}`
	cfg, err := Load([]byte(data), "c.json", env(map[string]string{
		"HOST": "example.com", "TOKEN": "tok/en 42", "KEY": "tok/en 42 and more", "BIN": "/opt/bin/server", "SHORT": "abc",
	}))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct{ in, want string }{
		{"POST https://example.com/tok%2Fen%2042/mcp: refused", "POST https://${HOST}/${TOKEN}/mcp: refused"},
		{"token=tok%2Fen+42", "token=${TOKEN}"},
		{"key tok/en 42 and more, token tok/en 42", "key ${KEY}, token ${TOKEN}"}, // the longer value whole
		{`cannot start "/opt/bin/server"`, `cannot start "${BIN}"`},
		{"abc and default-value stay", "abc and default-value stay"}, // too short; written in the file
	}
	for _, tt := range tests {
		if got := cfg.Redact(tt.in); got != tt.want {
			t.Errorf("Redact(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
	var none *Config
	if got := none.Redact("x"); got != "x" {
		t.Errorf("nil Config: Redact = %q", got)
	}
}

// TestRedactCut: text cut short (a long line kept up to a limit) may end
// with the start of a value, which is hidden too, from 4 characters on.
func TestRedactCut(t *testing.T) {
	data := `{"mcpServers": {"a": {"url": "https://x/${TOKEN}", "headers": {"X-Key": "${KEY}", "X-Pass": "${PASS}"}}}}`
	cfg, err := Load([]byte(data), "c.json", env(map[string]string{"TOKEN": "tok/en 42", "KEY": "tok/en 42 and more", "PASS": "pa55 word!"}))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct{ in, want string }{
		{"pass pa55", "pass ${PASS}"},
		{"pass pa55 wor", "pass ${PASS}"},
		{"key tok/en 42 and m", "key ${KEY}"},
		{"token tok/en 42", "token ${TOKEN}"},  // a whole value, not the start of a longer one
		{"GET /pa55%20word%2", "GET /${PASS}"}, // escaped, as in a URL
		{"q=pa55+wo", "q=${PASS}"},
		{"token tok/en 42, pass pa55 w", "token ${TOKEN}, pass ${PASS}"},
		{"pass pa5", "pass pa5"},                       // 3 characters: too short to hide
		{"pa55 somewhere else", "pa55 somewhere else"}, // a start not at the end was not cut
	}
	for _, tt := range tests {
		if got := cfg.RedactCut(tt.in); got != tt.want {
			t.Errorf("RedactCut(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
	var none *Config
	if got := none.RedactCut("pa55"); got != "pa55" {
		t.Errorf("nil Config: RedactCut = %q", got)
	}
}

// TestLoadNeverEchoesValues: a problem shows the value as written, ${VAR}
// and all, never what it expanded to.
func TestLoadNeverEchoesValues(t *testing.T) {
	const secret = "s3cret-value"
	data := `{"mcpServers": {
	  "a": {"command": "x", "type": "${V}", "timeout": "${V}", "max_timeout": "${V}", "roots": [{"uri": "${V}"}]},
	  "b": {"url": "${V}"}
	 },
	 "path": "${V}", "cache_ttl": "${V}"}`
	_, err := Load([]byte(data), "c.json", env(map[string]string{"V": secret}))
	var list ErrorList
	if !errors.As(err, &list) || len(list) < 6 {
		t.Fatalf("want at least 6 problems, got %v", err)
	}
	for _, p := range list {
		if strings.Contains(p.Error(), secret) {
			t.Errorf("problem shows the value: %s", p)
		}
	}
	if !strings.Contains(err.Error(), `mcpServers.a.type: must be "stdio", "http" or "sse", not "${V}"`) {
		t.Errorf("the type problem does not name ${V}:\n%v", err)
	}
}

func TestLoadCacheKeys(t *testing.T) {
	servers := `"mcpServers": {"a": {"command": "a"}}`
	for _, tt := range []struct {
		keys    string
		off     bool
		dir     string
		problem string
	}{
		{keys: ``},
		{keys: `, "cache": false`, off: true},
		{keys: `, "cache": true, "cache_dir": "cache"`, dir: "/etc/mcpgate/cache"},
		{keys: `, "cache_dir": "/var/cache/gate"`, dir: "/var/cache/gate"},
		{keys: `, "cache_dir": "${CACHE}"`, dir: "/c"},
		{keys: `, "cache_dir": ""`, problem: `cache_dir: must not be empty`},
		{keys: `, "cache": "no"`, problem: `cache: `},
	} {
		cfg, err := Load([]byte(`{`+servers+tt.keys+`}`), "/etc/mcpgate/gate.json", env(map[string]string{"CACHE": "/c"}))
		if tt.problem != "" {
			if err == nil || !strings.Contains(err.Error(), tt.problem) {
				t.Errorf("%s: err = %v, want %q", tt.keys, err, tt.problem)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", tt.keys, err)
			continue
		}
		if cfg.CacheOff != tt.off || cfg.CacheDir != tt.dir {
			t.Errorf("%s: CacheOff, CacheDir = %v, %q; want %v, %q", tt.keys, cfg.CacheOff, cfg.CacheDir, tt.off, tt.dir)
		}
	}
}
