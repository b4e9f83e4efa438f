package proxy

import "testing"

// A subscribe in flight whose subscribers a reload moved follows them
// through a second reload: its movedTo used to stay at the first
// successor's key, and a waiter cancelled after the second reload deleted
// itself from that stale key, staying counted at the one it was moved to.
func TestSubscribeInFlightFollowsItsSubscribersThroughReloads(t *testing.T) {
	g := &Gateway{subs: map[subKey]map[subscriber]string{}}
	old, first, second := &upstream{}, &upstream{}, &upstream{}
	sub := subscriber{s: &session{}}
	from := subKey{old, "file:///x"}
	p := g.startSubscribing(from)
	g.addSubscription(from, sub, "docs__file:///x")

	// # the first reload replaces old
	g.followMoves(map[*upstream]*upstream{old: first})
	g.moveSubscriptionKey(from, subKey{first, from.uri})

	// # the second replaces its successor before p settled
	g.followMoves(map[*upstream]*upstream{first: second})
	g.moveSubscriptionKey(subKey{first, from.uri}, subKey{second, from.uri})

	if want := (subKey{second, from.uri}); p.movedTo == nil || *p.movedTo != want {
		t.Fatalf("the subscribe in flight points its subscribers at %v, want the second successor's key", p.movedTo)
	}
	if _, ok := g.subs[*p.movedTo][sub]; !ok {
		t.Fatal("the subscriber is not at the key its subscribe in flight points at")
	}
	checkSubscriptionIndex(t, g, "after two reloads")
}
