package config

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/mcpgate/mcpgate/internal/rawjson"
)

// Cluster says that this mcpgate is one of several identical replicas
// behind a load balancer: what they share (the key of the requestStates
// they issue) and what names this one (its audit file, its states).
type Cluster struct {
	// Replica names this replica, unique among them: it goes into the
	// audit file's name and into every requestState it issues. Empty: not
	// in a cluster.
	Replica string
	// Replicas is how many replicas run: a rate limit with "scope":
	// "cluster" gives each its share. At least 1.
	Replicas int
	// Key signs requestStates, so that any replica can check one another
	// issued. From the environment, at least MinClusterKey bytes.
	Key []byte
	// DrainDelay is how long a replica that got SIGTERM goes on serving
	// while its /readyz already fails, so that the balancer stops sending
	// to it before it stops listening. Zero: it stops listening at once.
	DrainDelay time.Duration
}

// MinClusterKey is the least length of cluster.key, in bytes: an HMAC key
// shorter than its hash's output weakens it.
const MinClusterKey = 32

var clusterKeys = []string{"replica", "replicas", "key", "drain_delay"}

// replicaRE keeps a replica's name fit for a file name and a log line.
var replicaRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$`)

func (l *loader) cluster(raw json.RawMessage) Cluster {
	c := Cluster{Replicas: 1}
	members, err := rawjson.Members(raw)
	if err != nil {
		l.addf("cluster", "must be an object: %v", err)
		return c
	}
	for _, m := range members {
		path := "cluster." + m.Key
		switch m.Key {
		case "replica":
			// Not a secret, unlike other values from the environment: every
			// session id sent to a client starts with it. Logs show it.
			var written string
			if l.decode(path, m.Value, &written) {
				var err error
				if c.Replica, err = expand(written, l.lookup, func(string, string) {}); err != nil {
					l.addf(path, "%v", err)
					continue
				}
			}
			if !replicaRE.MatchString(c.Replica) {
				l.addf(path, "%q is not a replica name: letters, digits, '.', '_' and '-', at most 63, starting with a letter or digit", written)
			}
		case "replicas":
			if l.decode(path, m.Value, &c.Replicas) && c.Replicas < 1 {
				l.addf(path, "must be at least 1")
			}
		case "key":
			value, written := l.strWritten(path, m.Value, true)
			switch {
			case value == written:
				l.addf(path, `must come from the environment, like "${MCPGATE_CLUSTER_KEY}": a key written in the file is read by whoever reads the file`)
			case len(value) < MinClusterKey:
				l.addf(path, "%s holds %d bytes; at least %d are needed (generate one with: openssl rand -hex 32)", written, len(value), MinClusterKey)
			default:
				c.Key = []byte(value)
			}
		case "drain_delay":
			if d, ok := l.duration(path, m.Value); ok {
				c.DrainDelay = d
			}
		default:
			l.unknown(path, m.Key, clusterKeys)
		}
	}
	for _, k := range []struct{ key, what string }{
		{"replica", `this replica's name, unique among them, like "${HOSTNAME}" (a Kubernetes pod's name)`},
		{"key", `the key every replica signs requestStates with, like "${MCPGATE_CLUSTER_KEY}"`},
	} {
		if _, ok := members.Get(k.key); !ok {
			l.addf("cluster."+k.key, "missing: %s", k.what)
		}
	}
	return c
}

// applyCluster makes the rest of the config this replica's: its own
// audit file, and its share of each rate limit declared for the cluster.
func (l *loader) applyCluster(cfg *Config) {
	if cfg.Cluster.Replica != "" && cfg.Audit.Path != "" {
		cfg.Audit.Path = ReplicaFile(cfg.Audit.Path, cfg.Cluster.Replica)
		cfg.Audit.Replica = cfg.Cluster.Replica
	}
	l.clusterPolicies(cfg)
}

// ReplicaFile is the file a replica writes for path: its name before the
// extension, so that replicas sharing a directory (a volume) never write
// one file. "audit.jsonl" becomes "audit.NAME.jsonl".
func ReplicaFile(path, replica string) string {
	ext := filepath.Ext(path)
	if strings.ContainsAny(ext, `/\`) {
		ext = ""
	}
	return strings.TrimSuffix(path, ext) + "." + replica + ext
}

// clusterPolicies gives each rate limit declared for the whole cluster the
// number of replicas that share it, or says why it cannot have it.
func (l *loader) clusterPolicies(cfg *Config) {
	lists := [][]Policy{cfg.Policies}
	for _, s := range cfg.Servers {
		lists = append(lists, s.Policies)
	}
	for _, list := range lists {
		for i := range list {
			p := &list[i]
			if p.Scope != ScopeCluster {
				continue
			}
			switch {
			case cfg.Cluster.Replica == "":
				l.addf(p.Path+".scope", `"cluster" needs the cluster section (its "replicas" says how many share the limit)`)
			case p.Per == "session":
				l.addf(p.Path+".scope", `"cluster" cannot go with "per": "session": a session is served by one replica, which holds its whole limit; use "replica"`)
			default:
				p.Replicas = cfg.Cluster.Replicas
			}
		}
	}
}

// Rate limit scopes: each replica's own limit, or one for the whole cluster.
const (
	ScopeReplica = "replica"
	ScopeCluster = "cluster"
)

// checkScope reads a rate limit's "scope".
func (l *loader) checkScope(p *Policy, fpath string, raw json.RawMessage) {
	if l.decode(fpath, raw, &p.Scope) && p.Scope != ScopeReplica && p.Scope != ScopeCluster {
		l.addf(fpath, "%s", fmt.Sprintf(`must be "replica" (each replica enforces the limit) or "cluster" (the replicas share it), not %q`, p.Scope))
	}
}
