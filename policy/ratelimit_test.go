package policy

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mcpgate/mcpgate/config"
)

func mustRateLimit(t testing.TB, entry string) *rateLimitPolicy {
	t.Helper()
	p, err := newRateLimit(ruleLoadPolicy(t, entry), Env{})
	if err != nil {
		t.Fatal(err)
	}
	return p.(*rateLimitPolicy)
}

func rateRequest(session, server, tool string) *Input {
	in := ruleToolCall(tool, `{}`)
	in.Session, in.Server = session, server
	return in
}

func TestRateLimitBucket(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := mustRateLimit(t, `{"policy": "rate_limit", "per": "session", "rate": 10, "burst": 3}`)
		in := rateRequest("s1", "db", "query")
		for i := range 3 {
			if d := p.Decide(context.Background(), in); d.Action != Allow {
				t.Fatalf("request %d of the burst: %v (%s)", i+1, d.Action, d.Reason)
			}
		}
		d := p.Decide(context.Background(), in)
		if d.Action != Deny {
			t.Fatalf("past the burst: %v, want deny", d.Action)
		}
		if want := "rate limit of 10 requests per second per session reached; try again in 0.1s"; d.Reason != want {
			t.Errorf("reason %q, want %q", d.Reason, want)
		}
		if len(d.Findings) != 1 || d.Findings[0] != (Finding{Kind: RetryAfterKind, Count: 100}) {
			t.Errorf("findings %+v, want retry after 100 ms", d.Findings)
		}

		time.Sleep(40 * time.Millisecond)
		if d := p.Decide(context.Background(), in); d.Findings[0].Count != 60 || !strings.HasSuffix(d.Reason, "try again in 0.1s") {
			t.Errorf("40ms later: %s %+v, want 60 ms to wait", d.Reason, d.Findings)
		}
		time.Sleep(60 * time.Millisecond)
		if d := p.Decide(context.Background(), in); d.Action != Allow {
			t.Errorf("once a token is back: %v (%s)", d.Action, d.Reason)
		}
		if d := p.Decide(context.Background(), in); d.Action != Deny {
			t.Errorf("the token was taken: %v", d.Action)
		}

		// A quiet second refills the whole burst, no more.
		time.Sleep(10 * time.Second)
		for i := range 4 {
			d := p.Decide(context.Background(), in)
			if (d.Action == Allow) != (i < 3) {
				t.Errorf("after a quiet spell, request %d: %v", i+1, d.Action)
			}
		}
	})
}

func TestRateLimitSlowRate(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := mustRateLimit(t, `{"policy": "rate_limit", "per": "server", "rate": 0.5}`)
		in := rateRequest("s1", "db", "query")
		if d := p.Decide(context.Background(), in); d.Action != Allow {
			t.Fatalf("first: %v", d.Action)
		}
		d := p.Decide(context.Background(), in)
		if want := "rate limit of 0.5 requests per second per server reached; try again in 2s"; d.Reason != want {
			t.Errorf("reason %q, want %q (burst defaults to the rate rounded up)", d.Reason, want)
		}
		time.Sleep(1300 * time.Millisecond)
		if d := p.Decide(context.Background(), in); !strings.HasSuffix(d.Reason, "try again in 0.7s") {
			t.Errorf("reason %q, want 0.7s to wait", d.Reason)
		}
	})
	p := mustRateLimit(t, `{"policy": "rate_limit", "per": "tool", "rate": 1}`)
	if want := "1 request per second per tool"; p.limit != want {
		t.Errorf("limit %q, want %q", p.limit, want)
	}
}

func TestRateLimitKeys(t *testing.T) {
	long := strings.Repeat("x", maxRateKeyName+10)
	tests := []struct {
		per        string
		first      *Input
		same, diff []*Input
	}{
		{"session", rateRequest("s1", "db", "a"),
			[]*Input{rateRequest("s1", "db", "b")},
			[]*Input{rateRequest("s2", "db", "a"), rateRequest("s1", "fs", "a")}},
		{"server", rateRequest("s1", "db", "a"),
			[]*Input{rateRequest("s2", "db", "b")},
			[]*Input{rateRequest("s1", "fs", "a")}},
		{"tool", rateRequest("s1", "db", "a"),
			[]*Input{rateRequest("s2", "db", "a")},
			[]*Input{rateRequest("s1", "db", "b"), rateRequest("s1", "fs", "a"), {Stage: Request, Server: "db", Method: "prompts/get", UpstreamName: "a"}}},
		{"tool", rateRequest("s1", "db", long+"1"),
			[]*Input{rateRequest("s1", "db", long+"1")},
			[]*Input{rateRequest("s1", "db", long+"2")}},
	}
	for _, tt := range tests {
		t.Run(tt.per, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				p := mustRateLimit(t, fmt.Sprintf(`{"policy": "rate_limit", "per": %q, "rate": 1}`, tt.per))
				if d := p.Decide(context.Background(), tt.first); d.Action != Allow {
					t.Fatalf("first: %v", d.Action)
				}
				for _, in := range tt.same {
					if d := p.Decide(context.Background(), in); d.Action != Deny {
						t.Errorf("%+v shares the first's bucket: got %v", *in, d.Action)
					}
				}
				for _, in := range tt.diff {
					if d := p.Decide(context.Background(), in); d.Action != Allow {
						t.Errorf("%+v has a bucket of its own: got %v", *in, d.Action)
					}
				}
			})
		})
	}
}

// A client that makes up keys (sessions, URIs) gets its own buckets, but the
// policy keeps a bounded number of them; keys that go quiet are forgotten.
func TestRateLimitBucketsBounded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := mustRateLimit(t, `{"policy": "rate_limit", "per": "tool", "rate": 1, "burst": 2}`)
		victim := rateRequest("s1", "db", "victim")
		p.Decide(context.Background(), victim)
		p.Decide(context.Background(), victim)
		long := strings.Repeat("x", 8<<10)
		for i := range 3 * maxRateBuckets {
			p.Decide(context.Background(), rateRequest("s1", "db", fmt.Sprintf("file:///made/up/%d/%s", i, long)))
			if n := len(p.buckets); n > maxRateBuckets {
				t.Fatalf("%d buckets after %d keys", n, i+1)
			}
		}
		for k := range p.buckets {
			if len(k.name) > maxRateKeyName {
				t.Fatalf("a key keeps a name of %d bytes", len(k.name))
			}
		}
		time.Sleep(2 * time.Second) // every bucket refills
		for i := range maxRateBuckets {
			p.Decide(context.Background(), rateRequest("s1", "db", "steady"))
			if i%100 == 0 {
				time.Sleep(time.Second)
			}
		}
		if n := len(p.buckets); n > 1 {
			t.Errorf("%d buckets kept for keys long quiet, want only the busy one", n)
		}
	})
}

func TestRateLimitConcurrent(t *testing.T) {
	p := mustRateLimit(t, `{"policy": "rate_limit", "per": "server", "rate": 0.001, "burst": 50}`)
	var wg sync.WaitGroup
	var mu sync.Mutex
	allowed := 0
	for g := range 8 {
		wg.Go(func() {
			for i := range 100 {
				if d := p.Decide(context.Background(), rateRequest(fmt.Sprint(g), "db", fmt.Sprint(i))); d.Action == Allow {
					mu.Lock()
					allowed++
					mu.Unlock()
				}
			}
		})
	}
	wg.Wait()
	if allowed != 50 {
		t.Errorf("%d allowed, want the burst of 50", allowed)
	}
}

func TestRateLimitConfigErrors(t *testing.T) {
	tests := []struct {
		spec config.Policy
		want string
	}{
		{config.Policy{Per: "client", Rate: 1}, `policies[0].per: must be "session", "server" or "tool", not "client"`},
		{config.Policy{Per: "session", Rate: 0}, `policies[0].rate: must be a positive number`},
		{config.Policy{Per: "session", Rate: 1, Burst: -1}, `policies[0].burst: must be at least 1`},
	}
	for _, tt := range tests {
		tt.spec.Name, tt.spec.Path = "rate_limit", "policies[0]"
		if _, err := newRateLimit(tt.spec, Env{}); err == nil || !strings.HasPrefix(err.Error(), tt.want) {
			t.Errorf("%+v: %v, want %q…", tt.spec, err, tt.want)
		}
	}
}

func BenchmarkRateLimit(b *testing.B) {
	p := mustRateLimit(b, `{"policy": "rate_limit", "per": "tool", "rate": 1, "burst": 1000000000}`)
	in := rateRequest("s1", "db", "query")
	b.ReportAllocs()
	for b.Loop() {
		p.Decide(context.Background(), in)
	}
}

func statelessRequest(n int, client string) *Input {
	in := rateRequest(fmt.Sprintf("stateless-%d", n), "db", "query")
	in.Stateless, in.Client = true, client
	return in
}

// A request without a session comes with a session made for it alone, new
// every time: per session, such requests are counted by their client, or
// all together when the transport cannot tell clients apart, so minting
// sessions escapes no limit.
func TestRateLimitStatelessCountedByClient(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := mustRateLimit(t, `{"policy": "rate_limit", "per": "session", "rate": 1, "burst": 3}`)
		for _, client := range []string{"", "bearer:aa", "bearer:bb"} {
			for i := range 5 {
				d := p.Decide(context.Background(), statelessRequest(i, client))
				if (d.Action == Allow) != (i < 3) {
					t.Errorf("client %q, stateless request %d (a session of its own): %v, want the burst of 3 allowed, then denied", client, i+1, d.Action)
				}
			}
		}
		// A session's requests are still its own, whoever its client is.
		in := rateRequest("s1", "db", "query")
		in.Client = "bearer:aa"
		if d := p.Decide(context.Background(), in); d.Action != Allow {
			t.Errorf("a session of a client whose stateless requests used up their bucket: %v", d.Action)
		}
	})
}

// A session's bucket is not forgotten, to start full again, for requests
// that each come with a session of their own.
func TestRateLimitStatelessKeepsSessionsBuckets(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := mustRateLimit(t, `{"policy": "rate_limit", "per": "session", "rate": 0.001, "burst": 2}`)
		legacy := rateRequest("s1", "db", "query")
		p.Decide(context.Background(), legacy)
		p.Decide(context.Background(), legacy)
		for i := range 2 * maxRateBuckets {
			p.Decide(context.Background(), statelessRequest(i, ""))
		}
		if n := len(p.buckets); n != 2 {
			t.Errorf("%d buckets after 20,000 stateless requests, want 2 (the session's, the stateless requests')", n)
		}
		if d := p.Decide(context.Background(), legacy); d.Action != Deny {
			t.Errorf("the session's emptied bucket after 20,000 stateless requests: %v, want still empty", d.Action)
		}
	})
}
