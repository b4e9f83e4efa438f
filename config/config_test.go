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
