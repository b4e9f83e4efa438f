package proxy

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// walkHearing is who heard of a change of list k before the index: a walk
// of all the gateway's listeners, each told if it asked for k. The oracle
// the index must match.
func walkHearing(g *Gateway, owner *session, k kind) []*listener {
	var out []*listener
	for l := range g.listeners {
		if (owner == nil || l.s == owner) && l.lists[k] {
			out = append(out, l)
		}
	}
	return out
}

// TestListenIndexMatchesAWalk: whatever listens open and end (twice, or
// one opened again), in any order, over sessions of their own and shared
// servers, a change of each list is heard by exactly the listeners the
// walk of them all told; and once all have ended, the index holds nothing,
// not even an empty set for a session that is gone.
func TestListenIndexMatchesAWalk(t *testing.T) {
	for seed := range uint64(20) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 17))
			g := &Gateway{listeners: map[*listener]struct{}{}}
			sessions := []*session{{g: g}, {g: g}, {g: g}}
			owners := append([]*session{nil}, sessions...) // nil: a shared server
			var open []*listener
			for step := range 2000 {
				var op string
				switch r := rng.IntN(100); {
				case r < 45:
					op = "listen"
					l := &listener{s: sessions[rng.IntN(len(sessions))], holder: "h"}
					for k := range l.lists {
						l.lists[k] = rng.IntN(2) == 0
					}
					g.addListener(l)
					open = append(open, l)
				case r < 50 && len(open) > 0:
					op = "listen counted again"
					g.addListener(open[rng.IntN(len(open))])
				case r < 95 && len(open) > 0:
					op = "listen ends"
					i := rng.IntN(len(open))
					g.removeListener(open[i])
					open = slices.Delete(open, i, i+1)
				default:
					op = "an ended listen ends again"
					g.removeListener(&listener{s: sessions[rng.IntN(len(sessions))]})
				}
				for _, owner := range owners {
					for k := range kind(numKinds) {
						got, want := g.listenersBy.hearing(owner, k), walkHearing(g, owner, k)
						if !sameListeners(got, want) {
							t.Fatalf("step %d (%s): a change of list %d (owner %p) is heard by %d listeners; the walk told %d", step, op, k, owner, len(got), len(want))
						}
					}
				}
			}
			for _, l := range open {
				g.removeListener(l)
			}
			for k, set := range g.listenersBy.byKind {
				if len(set) != 0 {
					t.Errorf("all listens ended: the index still holds %d for list %d", len(set), k)
				}
			}
			if n := len(g.listenersBy.bySession); n != 0 {
				t.Errorf("all listens ended: the index still holds %d sessions", n)
			}
		})
	}
}

func sameListeners(a, b []*listener) bool {
	if len(a) != len(b) {
		return false
	}
	set := make(map[*listener]int, len(a))
	for _, l := range a {
		set[l]++
	}
	for _, l := range b {
		if set[l]--; set[l] < 0 {
			return false
		}
	}
	return true
}
