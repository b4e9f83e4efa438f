package proxy

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// walkElicitations is the table as it was, a map walked for the oldest and
// for a session's: the reference the table must match.
type walkElicitations struct {
	m   map[elicitationKey]elicitation
	seq uint64
}

func (w *walkElicitations) add(key elicitationKey, s *session) {
	delete(w.m, key)
	if len(w.m) >= maxElicitations {
		var oldest elicitationKey
		first := true
		for k, e := range w.m {
			if first || e.seq < w.m[oldest].seq {
				oldest, first = k, false
			}
		}
		delete(w.m, oldest)
	}
	w.seq++
	w.m[key] = elicitation{s, w.seq}
}

// TestElicitationTableMatchesAWalk: whatever adds (past the cap, or of a
// key held already), completions and session ends do, in any order, the
// table holds what the walked map holds, each under the session asked,
// forgets the same oldest one, and an add leaves its order within a bound.
func TestElicitationTableMatchesAWalk(t *testing.T) {
	for seed := range uint64(6) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 3))
			var table elicitationTable
			ref := &walkElicitations{m: map[elicitationKey]elicitation{}}
			ups := []*upstream{{}, {}}
			sessions := []*session{{}, {}, {}, {}}
			key := func() elicitationKey {
				// Few enough ids that some come again, many enough to pass the cap.
				return elicitationKey{ups[rng.IntN(len(ups))], fmt.Sprint(rng.IntN(3 * maxElicitations))}
			}
			for step := range 30000 {
				var op string
				switch r := rng.IntN(100); {
				case r < 70:
					op = "add"
					k, s := key(), sessions[rng.IntN(len(sessions))]
					table.add(k, s)
					ref.add(k, s)
				case r < 98:
					op = "complete"
					k := key()
					want := ref.m[k].s
					delete(ref.m, k)
					if got := table.take(k); got != want {
						t.Fatalf("step %d: completing %v reached session %p, want %p", step, k, got, want)
					}
				default:
					op = "session end"
					s := sessions[rng.IntN(len(sessions))]
					table.dropSession(s)
					for k, e := range ref.m {
						if e.s == s {
							delete(ref.m, k)
						}
					}
				}
				if step%97 != 0 && step < 29000 {
					continue // checked in full now and then: a full check walks both
				}
				if len(table.byKey) != len(ref.m) {
					t.Fatalf("step %d (%s): the table holds %d, the walked map %d", step, op, len(table.byKey), len(ref.m))
				}
				indexed := 0
				for s, keys := range table.bySession {
					if len(keys) == 0 {
						t.Fatalf("step %d (%s): a session with none is kept", step, op)
					}
					for k := range keys {
						if ref.m[k].s != s {
							t.Fatalf("step %d (%s): %v is under the wrong session", step, op, k)
						}
						indexed++
					}
				}
				for k, e := range ref.m {
					if table.byKey[k].s != e.s {
						t.Fatalf("step %d (%s): %v is held for session %p, want %p", step, op, k, table.byKey[k].s, e.s)
					}
				}
				if indexed != len(ref.m) {
					t.Fatalf("step %d (%s): %d indexed by session, %d held", step, op, indexed, len(ref.m))
				}
				if op == "add" && len(table.order) > 2*len(table.byKey)+65 {
					t.Fatalf("step %d (%s): order holds %d for %d elicitations", step, op, len(table.order), len(table.byKey))
				}
			}
		})
	}
}

// BenchmarkElicitationPastTheCap is what a server asking without end costs
// under g.mu per elicitation, with maxElicitations held: the walk for the
// oldest, as it was, against the table.
func BenchmarkElicitationPastTheCap(b *testing.B) {
	u, s := &upstream{}, &session{}
	b.Run("walk", func(b *testing.B) {
		ref := &walkElicitations{m: map[elicitationKey]elicitation{}}
		for i := range maxElicitations {
			ref.add(elicitationKey{u, fmt.Sprint(i)}, s)
		}
		i := maxElicitations
		for b.Loop() {
			ref.add(elicitationKey{u, fmt.Sprint(i)}, s)
			i++
		}
	})
	b.Run("table", func(b *testing.B) {
		var table elicitationTable
		for i := range maxElicitations {
			table.add(elicitationKey{u, fmt.Sprint(i)}, s)
		}
		i := maxElicitations
		for b.Loop() {
			table.add(elicitationKey{u, fmt.Sprint(i)}, s)
			i++
		}
	})
}

// A url-mode elicitation a server asks of a session that has just ended is
// not kept: the session's end took its elicitations away already, and one
// kept after it held the session in memory until maxElicitations pushed it
// out.
func TestElicitationOfAnEndedSessionIsNotKept(t *testing.T) {
	g := &Gateway{sessions: map[*session]struct{}{}}
	u := &upstream{}
	live, ended := &session{g: g, id: "live"}, &session{g: g, id: "ended"}
	g.sessions[live] = struct{}{}
	g.trackElicitation(u, []byte(`{"mode":"url","elicitationId":"e-live"}`), live)
	g.trackElicitation(u, []byte(`{"mode":"url","elicitationId":"e-ended"}`), ended)
	if _, ok := g.elicitations.byKey[elicitationKey{u, "e-live"}]; !ok {
		t.Error("the live session's elicitation was not kept")
	}
	if _, ok := g.elicitations.byKey[elicitationKey{u, "e-ended"}]; ok {
		t.Error("an elicitation of a session that had ended was kept")
	}
	if _, ok := g.elicitations.bySession[ended]; ok {
		t.Error("the ended session is held by the elicitation table")
	}
}
