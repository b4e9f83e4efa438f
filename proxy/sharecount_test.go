package proxy

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"testing"
)

// walkParked and walkListens count a holder's entries the slow way, the
// oracle the kept counts must match.
func walkParked(g *Gateway, holder string) int {
	n := 0
	for _, x := range g.parked {
		if x.holder == holder {
			n++
		}
	}
	return n
}

func walkListens(g *Gateway, holder string) int {
	n := 0
	for l := range g.listeners {
		if l.holder == holder {
			n++
		}
	}
	return n
}

// TestShareCountsMatchAWalk: whatever parks, resumes, ends (twice, or
// after a resume), listens and listen ends do, in any order, each
// client's kept counts of parked calls and listens are what a walk
// counts, and no client with none keeps a count.
func TestShareCountsMatchAWalk(t *testing.T) {
	for seed := range uint64(20) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 13))
			g := &Gateway{parked: map[string]*exchange{}, listeners: map[*listener]struct{}{}}
			up := &upstream{name: "asker"}
			// Clients by token, and sessions as clients of their own.
			holders := []string{"bearer:a", "bearer:b", "session:s1", "session:s2", ""}
			var exchanges []*exchange
			var listens []*listener
			for step := range 3000 {
				var op string
				switch r := rng.IntN(100); {
				case r < 30:
					op = "park"
					x := &exchange{id: strconv.Itoa(step), up: up, holder: holders[rng.IntN(len(holders))]}
					if g.roomToPark(x) == nil {
						g.parkExchange(x)
						exchanges = append(exchanges, x)
					}
				case r < 35 && len(exchanges) > 0:
					op = "park again" // asked again for what is still missing
					g.parkExchange(exchanges[rng.IntN(len(exchanges))])
				case r < 55 && len(exchanges) > 0:
					op = "resume or end"
					g.unparkExchange(exchanges[rng.IntN(len(exchanges))]) // once held, or ended already
				case r < 80:
					op = "listen"
					l := &listener{holder: holders[rng.IntN(len(holders))]}
					if g.roomForListen(l.holder) == nil {
						g.addListener(l)
						listens = append(listens, l)
					}
				case len(listens) > 0:
					op = "listen end"
					g.removeListener(listens[rng.IntN(len(listens))])
				default:
					op = "session end" // its listens end
					holder := holders[rng.IntN(len(holders))]
					for _, l := range listens {
						if l.holder == holder {
							g.removeListener(l)
						}
					}
				}
				for _, h := range holders {
					if got, want := g.parkedOf[h], walkParked(g, h); got != want {
						t.Fatalf("step %d (%s): client %q counted %d parked calls, a walk finds %d", step, op, h, got, want)
					}
					if got, want := g.listensOf[h], walkListens(g, h); got != want {
						t.Fatalf("step %d (%s): client %q counted %d listens, a walk finds %d", step, op, h, got, want)
					}
				}
				for h, n := range g.parkedOf {
					if n <= 0 {
						t.Fatalf("step %d (%s): client %q keeps a count of %d parked calls", step, op, h, n)
					}
				}
				for h, n := range g.listensOf {
					if n <= 0 {
						t.Fatalf("step %d (%s): client %q keeps a count of %d listens", step, op, h, n)
					}
				}
			}
		})
	}
}

// BenchmarkShareCheck is what each park and each listen costs to check
// its client's share with the caps for all clients nearly full (1,023
// entries, a quarter of them the client's): walk, as it was, against the
// kept count.
func BenchmarkShareCheck(b *testing.B) {
	g := &Gateway{parked: map[string]*exchange{}}
	up := &upstream{name: "asker"}
	for i := range maxParked - 1 {
		g.parkExchange(&exchange{id: strconv.Itoa(i), up: up, holder: "session:" + strconv.Itoa(i%5)})
	}
	x := &exchange{id: "next", up: up, holder: "session:new"}
	b.Run("walk", func(b *testing.B) {
		for b.Loop() {
			if walkParked(g, x.holder) >= clientShareOf(maxParked) {
				b.Fatal("past the share")
			}
		}
	})
	b.Run("counted", func(b *testing.B) {
		for b.Loop() {
			if err := g.roomToPark(x); err != nil {
				b.Fatal(err)
			}
		}
	})
}
