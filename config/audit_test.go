package config

import (
	"strings"
	"testing"
	"time"
)

func TestLoadAudit(t *testing.T) {
	cfg, err := Load([]byte(`{"mcpServers": {"a": {"command": "x"}},
	  "audit": {"path": "a.jsonl", "max_bytes": 1048576, "max_age": "24h", "sync": "always"}}`), "c.json", env(nil))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := cfg.Audit, (Audit{Path: "a.jsonl", MaxBytes: 1 << 20, MaxAge: 24 * time.Hour, Sync: SyncAlways}); got != want {
		t.Errorf("audit = %+v, want %+v", got, want)
	}
	if len(cfg.SHA256) != 64 || cfg.File != "c.json" {
		t.Errorf("File, SHA256 = %q, %q; want the file name and a SHA-256", cfg.File, cfg.SHA256)
	}

	cfg, err = Load([]byte(`{"mcpServers": {"a": {"command": "x"}}, "audit": {"path": "a.jsonl"}}`), "c.json", env(nil))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Audit.Sync != SyncBatch || cfg.Audit.MaxBytes != 0 || cfg.Audit.MaxAge != 0 {
		t.Errorf("defaults: audit = %+v, want sync batch and no rotation", cfg.Audit)
	}

	_, err = Load([]byte(`{"mcpServers": {"a": {"command": "x"}},
	  "audit": {"path": "a.jsonl", "max_bytes": 100, "max_age": "soon", "sync": "alway", "max_byte": 1}}`), "c.json", env(nil))
	for _, want := range []string{
		`audit.max_bytes: must be at least 1024 (leave it out for no limit)`,
		`audit.max_age: "soon" is not a duration`,
		`audit.sync: "alway" is not one of "always", "batch", "none"; did you mean "always"?`,
		`audit.max_byte: unknown field; did you mean "max_bytes"?`,
	} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error does not say %q:\n%v", want, err)
		}
	}
}
