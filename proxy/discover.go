package proxy

import (
	"context"
	"encoding/json"
	"slices"
)

// server/discover is the modern client's first question (or its probe of
// the era): which versions mcpgate speaks, what it offers, who it is. The
// answer is the gateway's own, as initialize's is: merged capabilities and
// instructions, and every version it serves, the modern ones per request
// and the legacy ones through initialize.
func (s *session) discover(ctx context.Context, _ json.RawMessage, _ *auditRecord) (json.RawMessage, error) {
	if err := s.g.awaitStartup(ctx); err != nil {
		return nil, err
	}
	versions := slices.Concat(modernVersions, supportedVersions)
	slices.Reverse(versions[len(modernVersions):]) // newest first
	res := map[string]any{
		"supportedVersions": versions,
		"capabilities":      s.g.capabilities(),
	}
	if instr := s.g.instructions(); instr != "" {
		res["instructions"] = instr
	}
	return s.g.finishOwnResult(mustJSON(res), s.g.discoverHint()), nil
}

// discoverHint is how long the answer to discover may be reused: while
// every server is connected, capabilities change only when one restarts
// (then clients are told on listen streams anyway), so for cache_ttl;
// while one is not, what it offers is still unknown: not at all.
func (g *Gateway) discoverHint() cacheHint {
	for _, u := range g.live().upstreams {
		if _, known := u.knownInit(); !known {
			return cacheHint{}
		}
	}
	return cacheHint{ttl: g.live().cfg.CacheTTL}
}

// finishOwnResult completes a result the gateway made itself for a modern
// request: how long it may be reused, and who made it.
func (g *Gateway) finishOwnResult(res json.RawMessage, h cacheHint) json.RawMessage {
	return setMeta(withCacheHint(res, h), metaPair{metaServerInfo, g.serverInfo()})
}

// serverInfo is mcpgate's implementation object.
func (g *Gateway) serverInfo() json.RawMessage {
	return mustJSON(implementation{Name: "mcpgate", Version: g.version})
}
