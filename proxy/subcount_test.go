package proxy

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// walkSubscriptions counts sub's subscriptions the slow way, the oracle
// the kept counts must match.
func walkSubscriptions(g *Gateway, sub subscriber) int {
	n := 0
	for _, subs := range g.subs {
		if _, ok := subs[sub]; ok {
			n++
		}
	}
	return n
}

// checkSubscriptionIndex fails unless g.subsOf and g.subsByUp hold exactly
// what g.subs does, and no session, subscriber or server without
// subscriptions.
func checkSubscriptionIndex(t testing.TB, g *Gateway, when string) {
	t.Helper()
	n := 0
	for key, subs := range g.subs {
		for sub := range subs {
			if _, ok := g.subsOf[sub.s][sub][key]; !ok {
				t.Fatalf("%s: %v subscribes to %v, and the index misses it", when, sub, key)
			}
			n++
		}
	}
	for s, subs := range g.subsOf {
		if len(subs) == 0 {
			t.Fatalf("%s: a session without subscriptions is kept in the index", when)
		}
		for sub, keys := range subs {
			if sub.s != s {
				t.Fatalf("%s: a subscriber is indexed under another session", when)
			}
			if len(keys) == 0 {
				t.Fatalf("%s: a subscriber without subscriptions is kept in the index", when)
			}
			for key := range keys {
				if _, ok := g.subs[key][sub]; !ok {
					t.Fatalf("%s: the index has %v subscribed to %v, which it is not", when, sub, key)
				}
				n--
			}
		}
	}
	if n != 0 {
		t.Fatalf("%s: the index and the subscriptions differ by %d", when, n)
	}
	uris := 0
	for key := range g.subs {
		if _, ok := g.subsByUp[key.up][key.uri]; !ok {
			t.Fatalf("%s: %v has subscribers, and its server's URIs miss it", when, key)
		}
		uris++
	}
	for u, byURI := range g.subsByUp {
		if len(byURI) == 0 {
			t.Fatalf("%s: a server without subscriptions keeps its URIs", when)
		}
		for uri := range byURI {
			if _, ok := g.subs[subKey{u, uri}]; !ok {
				t.Fatalf("%s: a server's URIs hold %s, which has no subscriber", when, uri)
			}
			uris--
		}
	}
	if uris != 0 {
		t.Fatalf("%s: the servers' URIs and the subscriptions differ by %d", when, uris)
	}
}

// TestSubscriptionCountsMatchAWalk: whatever adds, removes, session and
// listen ends, retired and replaced servers do to g.subs, each
// subscriber's kept count is what a walk of g.subs counts, and the index
// by session holds exactly the subscriptions (none left for a subscriber
// or session that has none).
func TestSubscriptionCountsMatchAWalk(t *testing.T) {
	for seed := range uint64(20) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 7))
			g := &Gateway{subs: map[subKey]map[subscriber]string{}}
			ups := []*upstream{{}, {}, {}}
			for _, u := range ups {
				u.base = u
			}
			sessions := []*session{{}, {}, {}}
			var subs []subscriber
			for _, s := range sessions {
				subs = append(subs, subscriber{s: s}, subscriber{s: s, listen: &listener{s: s}}, subscriber{s: s, listen: &listener{s: s}})
			}
			randomKey := func() subKey {
				return subKey{ups[rng.IntN(len(ups))], fmt.Sprintf("file:///%d", rng.IntN(8))}
			}
			for step := range 2000 {
				var op string
				switch r := rng.IntN(100); {
				case r < 50:
					op = "add"
					g.addSubscription(randomKey(), subs[rng.IntN(len(subs))], "x")
				case r < 85:
					op = "remove"
					g.deleteSubscription(randomKey(), subs[rng.IntN(len(subs))])
				case r < 92:
					op = "session end"
					s := sessions[rng.IntN(len(sessions))]
					g.deleteSessionSubscribers(s)
				case r < 96:
					op = "listen end"
					g.deleteSubscriber(subs[rng.IntN(len(subs))])
				case r < 98:
					op = "server retired"
					u := ups[rng.IntN(len(ups))]
					for key := range g.subs {
						if key.up.base == u {
							g.deleteSubscriptionKey(key)
						}
					}
				default:
					op = "server replaced"
					i := rng.IntN(len(ups))
					nu := &upstream{}
					nu.base = nu
					for key := range g.subs {
						if key.up == ups[i] {
							g.moveSubscriptionKey(key, subKey{nu, key.uri})
						}
					}
					ups[i] = nu
				}
				for _, sub := range subs {
					if got, want := g.subscriptionsOf(sub), walkSubscriptions(g, sub); got != want {
						t.Fatalf("step %d (%s): subscriber counted %d subscriptions, a walk finds %d", step, op, got, want)
					}
				}
				checkSubscriptionIndex(t, g, fmt.Sprintf("step %d (%s)", step, op))
			}
		})
	}
}

// BenchmarkSubscriptionLimitCheck is what each subscribe costs to check
// its subscriber's limit with one client holding 256 listens of 1,024
// URIs each (262,144 in all): walk, as it was, against the kept count.
func BenchmarkSubscriptionLimitCheck(b *testing.B) {
	g := &Gateway{subs: map[subKey]map[subscriber]string{}}
	u := &upstream{}
	s := &session{}
	for l := range 256 {
		sub := subscriber{s: s, listen: &listener{}}
		for i := range 1024 {
			g.addSubscription(subKey{u, fmt.Sprintf("file:///%d/%d", l, i)}, sub, "x")
		}
	}
	other := subscriber{s: &session{}}
	b.Run("walk", func(b *testing.B) {
		for b.Loop() {
			walkSubscriptions(g, other)
		}
	})
	b.Run("counted", func(b *testing.B) {
		for b.Loop() {
			g.subscriptionsOf(other)
		}
	})
}

// BenchmarkSessionEndSubscriptions is what a session's end costs under
// g.mu to take away its own 4 subscriptions while another client holds
// 256 listens of 1,024 URIs each (262,144 in all): a walk of every
// subscription, as it was, against the index by session.
func BenchmarkSessionEndSubscriptions(b *testing.B) {
	g := &Gateway{subs: map[subKey]map[subscriber]string{}}
	u := &upstream{}
	busy := &session{}
	for l := range 256 {
		sub := subscriber{s: busy, listen: &listener{s: busy}}
		for i := range 1024 {
			g.addSubscription(subKey{u, fmt.Sprintf("file:///%d/%d", l, i)}, sub, "x")
		}
	}
	leaving := &session{}
	subscribe := func() {
		for i := range 4 {
			g.addSubscription(subKey{u, fmt.Sprintf("file:///leaving/%d", i)}, subscriber{s: leaving}, "x")
		}
	}
	b.Run("walk", func(b *testing.B) {
		for b.Loop() {
			subscribe()
			walkDeleteSubscribers(g, func(sub subscriber) bool { return sub.s == leaving })
		}
	})
	b.Run("indexed", func(b *testing.B) {
		for b.Loop() {
			subscribe()
			g.deleteSessionSubscribers(leaving)
		}
	})
}

// walkDeleteSubscribers is how a session's end took its subscriptions
// away before the index: a walk of every subscription.
func walkDeleteSubscribers(g *Gateway, gone func(subscriber) bool) (last []subKey) {
	for key, subs := range g.subs {
		for sub := range subs {
			if gone(sub) && g.deleteSubscription(key, sub) {
				last = append(last, key)
			}
		}
	}
	return last
}

// BenchmarkInstanceBusy is what the reaper's check of one idle isolated
// instance costs under g.mu while other servers hold 262,144
// subscriptions: a walk of them all, as it was, against its own URIs.
func BenchmarkInstanceBusy(b *testing.B) {
	g := &Gateway{subs: map[subKey]map[subscriber]string{}}
	other, idle := &upstream{g: g}, &upstream{g: g}
	s := &session{}
	for l := range 256 {
		sub := subscriber{s: s, listen: &listener{s: s}}
		for i := range 1024 {
			g.addSubscription(subKey{other, fmt.Sprintf("file:///%d/%d", l, i)}, sub, "x")
		}
	}
	b.Run("walk", func(b *testing.B) {
		for b.Loop() {
			for key := range g.subs {
				if key.up == idle {
					b.Fatal("busy")
				}
			}
		}
	})
	b.Run("indexed", func(b *testing.B) {
		for b.Loop() {
			g.mu.Lock()
			busy := len(g.subsByUp[idle]) > 0
			g.mu.Unlock()
			if busy {
				b.Fatal("busy")
			}
		}
	})
}
