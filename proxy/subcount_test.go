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

// TestSubscriptionCountsMatchAWalk: whatever adds, removes, session and
// listen ends, retired and replaced servers do to g.subs, each
// subscriber's kept count is what a walk of g.subs counts, and no
// subscriber without subscriptions keeps a count.
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
				subs = append(subs, subscriber{s: s}, subscriber{s: s, listen: &listener{}}, subscriber{s: s, listen: &listener{}})
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
					g.deleteSubscribersWhere(func(sub subscriber) bool { return sub.s == s })
				case r < 96:
					op = "listen end"
					l := subs[rng.IntN(len(subs))].listen
					g.deleteSubscribersWhere(func(sub subscriber) bool { return sub.listen == l })
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
				for sub, n := range g.subCounts {
					if n <= 0 || walkSubscriptions(g, sub) == 0 {
						t.Fatalf("step %d (%s): a subscriber with no subscriptions keeps a count of %d", step, op, n)
					}
				}
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
