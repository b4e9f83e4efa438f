package policy

import (
	"context"
	"crypto/sha256"
	"fmt"
	"math"
	"strconv"
	"sync"
	"time"

	"github.com/mcpgate/mcpgate/config"
)

// The rate_limit policy gives each key (a client session, a server, or a
// tool) a token bucket: "burst" requests at once, refilled at "rate" per
// second. A request that finds its bucket empty is refused at once with
// how long to wait; refused requests take no token.
//
// Keys are always per server, whatever "per" says: a top-level entry is the
// default each server gets, as a server's own entry replaces it, so "per
// session" means each session's requests to one server. A request without
// a session (Input.Stateless) counts as its client's (Input.Client), and
// all those whose client the transport cannot tell apart as one.

// RetryAfterKind is the Finding kind by which a rate_limit Deny says how
// long to wait: its Count is milliseconds, not a count. The Reason says it
// too, in words ("try again in 0.4s"); this is for a gateway that puts it
// into a field of its own (an HTTP Retry-After, an error's data).
const RetryAfterKind = "retry_after_ms"

// maxRateBuckets bounds the buckets one policy keeps: a client that names
// new URIs (per tool) or opens sessions must not grow the map without end.
// Past it the least recently used bucket is dropped; a bucket that has
// refilled is dropped as soon as it is noticed, since a new one would be
// the same.
const maxRateBuckets = 10000

// maxRateKeyName is the longest name kept as it is in a key; longer ones
// (URIs, mostly) are kept as their SHA-256, so that the buckets' memory is
// bounded in bytes, not just in number.
const maxRateKeyName = 128

type rateLimitPolicy struct {
	name  string
	per   string
	rate  float64 // tokens per second
	burst float64
	limit string // "10 requests per second per session", for reasons

	mu      sync.Mutex
	buckets map[rateKey]*rateBucket
	recent  rateBucket // sentinel of the ring of buckets, most recently used first
}

// rateKey says whose bucket: fields not part of the key are empty.
// Stateless requests' keys are apart from sessions' by stateless.
type rateKey struct {
	server, session, method, name string
	client                        string
	stateless                     bool
}

type rateBucket struct {
	key        rateKey
	tokens     float64
	at         time.Time // when tokens was last brought up to date
	prev, next *rateBucket
}

func newRateLimit(spec config.Policy, env Env) (Policy, error) {
	switch spec.Per {
	case "session", "server", "tool":
	default:
		return nil, fmt.Errorf(`%s.per: must be "session", "server" or "tool", not %q`, spec.Path, spec.Per)
	}
	if !(spec.Rate > 0) || math.IsInf(spec.Rate, 0) {
		return nil, fmt.Errorf("%s.rate: must be a positive number of requests per second, not %v", spec.Path, spec.Rate)
	}
	burst := spec.Burst
	if burst == 0 {
		burst = max(1, int(math.Ceil(spec.Rate)))
	}
	if burst < 1 {
		return nil, fmt.Errorf("%s.burst: must be at least 1, not %d", spec.Path, burst)
	}
	unit := "requests"
	if spec.Rate == 1 {
		unit = "request"
	}
	limit := fmt.Sprintf("%s %s per second per %s", strconv.FormatFloat(spec.Rate, 'f', -1, 64), unit, spec.Per)
	rate := spec.Rate
	if spec.Scope == config.ScopeCluster && spec.Replicas > 1 {
		// Each replica holds its share: a balancer spreads requests about
		// evenly, and sharing one bucket would need a store between them.
		rate /= float64(spec.Replicas)
		burst = max(1, burst/spec.Replicas)
		limit += fmt.Sprintf(" across %d replicas (%s here)", spec.Replicas, strconv.FormatFloat(rate, 'f', -1, 64))
	}
	p := &rateLimitPolicy{
		name: spec.Name, per: spec.Per, rate: rate, burst: float64(burst),
		limit:   limit,
		buckets: map[rateKey]*rateBucket{},
	}
	p.recent.prev, p.recent.next = &p.recent, &p.recent
	return p, nil
}

func (p *rateLimitPolicy) Name() string    { return p.name }
func (p *rateLimitPolicy) Stages() []Stage { return requestStage }

func (p *rateLimitPolicy) Decide(ctx context.Context, in *Input) Decision {
	if in.Stage != Request {
		return Decision{}
	}
	wait := p.take(p.key(in), time.Now())
	if wait <= 0 {
		return Decision{}
	}
	secs := math.Ceil(wait.Seconds()*10) / 10
	return Decision{
		Action:   Deny,
		Reason:   fmt.Sprintf("rate limit of %s reached; try again in %ss", p.limit, strconv.FormatFloat(secs, 'f', -1, 64)),
		Findings: []Finding{{Kind: RetryAfterKind, Count: int(math.Ceil(wait.Seconds() * 1000))}},
	}
}

func (p *rateLimitPolicy) key(in *Input) rateKey {
	switch p.per {
	case "session":
		if in.Stateless {
			// Its session is new with every request: a client that could
			// escape the limit by minting sessions, and churn everyone's
			// buckets out, is counted as itself, or with every other
			// anonymous one.
			return rateKey{server: in.Server, client: in.Client, stateless: true}
		}
		return rateKey{server: in.Server, session: in.Session}
	case "tool":
		// Each thing a request names: a tool, and for other requests the
		// prompt or URI, per method.
		name := in.UpstreamName
		if name == "" {
			name = in.Name
		}
		if len(name) > maxRateKeyName {
			sum := sha256.Sum256([]byte(name))
			name = string(sum[:])
		}
		return rateKey{server: in.Server, method: in.Method, name: name}
	}
	return rateKey{server: in.Server}
}

// take takes a token from k's bucket, or says how long until there is one.
func (p *rateLimitPolicy) take(k rateKey, now time.Time) time.Duration {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.dropRefilled(now)
	b := p.buckets[k]
	if b == nil {
		if len(p.buckets) >= maxRateBuckets {
			p.drop(p.recent.prev)
		}
		b = &rateBucket{key: k, tokens: p.burst, at: now}
		p.buckets[k] = b
	} else {
		p.refill(b, now)
		b.prev.next, b.next.prev = b.next, b.prev
	}
	b.prev, b.next = &p.recent, p.recent.next
	b.next.prev, p.recent.next = b, b
	// A hair under one token is one: refills in float64 do not add up to
	// whole numbers exactly.
	if b.tokens >= 1-1e-9 {
		b.tokens = max(0, b.tokens-1)
		return 0
	}
	return time.Duration((1 - b.tokens) / p.rate * float64(time.Second))
}

func (p *rateLimitPolicy) refill(b *rateBucket, now time.Time) {
	if elapsed := now.Sub(b.at).Seconds(); elapsed > 0 {
		b.tokens = min(p.burst, b.tokens+elapsed*p.rate)
		b.at = now
	}
}

// dropRefilled drops the least recently used buckets while they are full:
// a couple per call, so the map shrinks back as keys go quiet and no call
// pays for a sweep.
func (p *rateLimitPolicy) dropRefilled(now time.Time) {
	for range 2 {
		b := p.recent.prev
		if b == &p.recent {
			return
		}
		p.refill(b, now)
		if b.tokens < p.burst {
			return
		}
		p.drop(b)
	}
}

func (p *rateLimitPolicy) drop(b *rateBucket) {
	b.prev.next, b.next.prev = b.next, b.prev
	b.prev, b.next = nil, nil
	delete(p.buckets, b.key)
}
