package proxy

import (
	"encoding/json"
	"math"
	"strconv"
	"time"

	"github.com/mcpgate/mcpgate/internal/rawjson"
)

// Modern results that can be reused say for how long (ttlMs) and by whom
// (cacheScope: "public", anyone; "private", this client alone). mcpgate
// reads them on its upstreams' lists (they bound its own cache), and
// gives its own on what it answers: a merged list may be reused for as
// long as its shortest-lived part, and is private if any part is.

// cacheHint is how long something may be reused, and whether only by the
// client that asked.
type cacheHint struct {
	ttl      time.Duration
	private  bool
	declared bool // the server gave a hint (a modern server): it bounds the cache
}

// and combines two hints: the shorter life, private if either is. first
// says h is the first hint (nothing to combine with yet).
func (h cacheHint) and(o cacheHint, first bool) cacheHint {
	if first || !h.declared {
		return o
	}
	return cacheHint{ttl: min(h.ttl, o.ttl), private: h.private || o.private, declared: true}
}

// readCacheHint reads a result's ttlMs and cacheScope; false when it has
// none (a legacy server). A scope other than "public" is private, and a
// ttl that is not a non-negative number is 0, as the spec has clients
// read them.
func readCacheHint(result json.RawMessage) (cacheHint, bool) {
	ms, err := rawjson.SplitValid(result)
	if err != nil {
		return cacheHint{}, false
	}
	return cacheHintOf(ms)
}

// cacheHintOf is readCacheHint on a result already split.
func cacheHintOf(ms rawjson.MemberList) (cacheHint, bool) {
	rawTTL, ok := ms.Get("ttlMs")
	if !ok {
		return cacheHint{}, false
	}
	h := cacheHint{private: true, declared: true}
	var ms64 float64
	if json.Unmarshal(rawTTL, &ms64) == nil && ms64 > 0 {
		h.ttl = time.Duration(min(ms64, math.MaxInt64/float64(time.Millisecond))) * time.Millisecond
	}
	var scope string
	if raw, ok := ms.Get("cacheScope"); ok && json.Unmarshal(raw, &scope) == nil && scope == "public" {
		h.private = false
	}
	return h, true
}

// listHint is how long the cached list k may still be reused by a client:
// 0 when it is not cached (the server does not say when it changes).
func (u *upstream) listHint(k kind) cacheHint {
	u.mu.Lock()
	defer u.mu.Unlock()
	c := &u.lists[k]
	h := cacheHint{private: c.private || u.owner != nil, declared: true}
	if c.fresh {
		h.ttl = max(0, time.Until(c.expires))
	}
	return h
}

// withCacheHint adds ttlMs and cacheScope to a modern result.
func withCacheHint(result json.RawMessage, h cacheHint) json.RawMessage {
	ms, err := rawjson.SplitValid(result)
	if err != nil {
		return result
	}
	scope := `"public"`
	if h.private {
		scope = `"private"`
	}
	result = ms.Replace(result, "ttlMs", json.RawMessage(strconv.AppendInt(nil, h.ttl.Milliseconds(), 10)))
	ms, _ = rawjson.SplitValid(result)
	return ms.Replace(result, "cacheScope", json.RawMessage(scope))
}

// mergedHint is the hint of a list merged from results: the shortest life
// of its parts, private if any part is; 0 when a server is missing from it
// (its items come back with it).
func mergedHint(results []listResult) cacheHint {
	h := cacheHint{declared: true}
	first := true
	for _, r := range results {
		switch {
		case r.err != nil:
			h.ttl, first = 0, false
		case !r.skipped:
			if first {
				h, first = r.hint, false
			} else {
				h = h.and(r.hint, false)
			}
		}
	}
	if first {
		h.ttl = 0 // nothing answered: nothing to reuse
	}
	return h
}

// withDefaultCacheHint gives a resource a legacy server read the hint the
// modern era requires, if it has none: not to be reused, by this client
// alone (nothing is known of it).
func withDefaultCacheHint(res json.RawMessage) json.RawMessage {
	if _, ok := readCacheHint(res); ok {
		return res
	}
	return withCacheHint(res, cacheHint{private: true})
}
