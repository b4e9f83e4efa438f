package config

import "testing"

func TestReplicaFile(t *testing.T) {
	for _, c := range []struct{ path, want string }{
		{"audit.jsonl", "audit.r1.jsonl"},
		{"/var/log/mcpgate/audit.jsonl", "/var/log/mcpgate/audit.r1.jsonl"},
		{"/var/log/mcp.d/audit", "/var/log/mcp.d/audit.r1"},
		{"trail", "trail.r1"},
	} {
		if got := ReplicaFile(c.path, "r1"); got != c.want {
			t.Errorf("ReplicaFile(%q) = %q, want %q", c.path, got, c.want)
		}
	}
}

func TestClusterSharesRateLimits(t *testing.T) {
	env := map[string]string{"KEY": "0123456789abcdef0123456789abcdef", "HOSTNAME": "pod-1"}
	cfg, err := Load([]byte(`{"mcpServers": {"a": {"command": "x",
	    "policies": [{"policy": "rate_limit", "per": "tool", "rate": 9}]}},
	  "policies": [{"policy": "rate_limit", "per": "server", "rate": 9, "scope": "cluster"}],
	  "audit": {"path": "audit.jsonl"},
	  "cluster": {"replica": "${HOSTNAME}", "replicas": 3, "key": "${KEY}"}}`), "c.json",
		func(k string) (string, bool) { v, ok := env[k]; return v, ok })
	if err != nil {
		t.Fatal(err)
	}
	if p := cfg.Policies[0]; p.Replicas != 3 || p.Scope != ScopeCluster {
		t.Errorf("top-level rate limit: scope %q, replicas %d; want cluster, 3", p.Scope, p.Replicas)
	}
	if p := cfg.Servers[0].Policies[0]; p.Replicas != 0 || p.Scope != ScopeReplica {
		t.Errorf("server's rate limit: scope %q, replicas %d; want replica, 0", p.Scope, p.Replicas)
	}
	if cfg.Audit.Path != "audit.pod-1.jsonl" || cfg.Audit.Replica != "pod-1" {
		t.Errorf("audit: path %q, replica %q", cfg.Audit.Path, cfg.Audit.Replica)
	}
	if got := cfg.Redact("session pod-1.abc"); got != "session pod-1.abc" {
		t.Errorf("the replica's name is redacted: %q", got)
	}
	if string(cfg.Cluster.Key) != env["KEY"] {
		t.Error("cluster.key not read")
	}
}
