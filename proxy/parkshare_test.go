package proxy

import (
	"strconv"
	"strings"
	"testing"
)

// One client cannot hold every call waiting for input: past its share (a
// quarter of maxParked) its next one is refused, naming the limit and what
// to do, while another client's still fits; the cap for all stays.
func TestParkedCallsPerClientShare(t *testing.T) {
	g := &Gateway{parked: map[string]*exchange{}}
	up := &upstream{name: "asker"}
	park := func(holder string) *exchange {
		x := &exchange{id: strconv.Itoa(len(g.parked)), up: up, holder: holder}
		return x
	}
	for range clientShareOf(maxParked) {
		x := park("bearer:a")
		if err := g.roomToPark(x); err != nil {
			t.Fatalf("call %d of client a refused: %v", len(g.parked)+1, err)
		}
		g.parked[x.id] = x
	}
	err := g.roomToPark(park("bearer:a"))
	if err == nil || !strings.Contains(err.Error(), "the most mcpgate keeps for one client") || !strings.Contains(err.Error(), `upstream "asker"`) {
		t.Fatalf("client a past its share: %v; want refused, naming the server and the per-client limit", err)
	}
	for _, holder := range []string{"bearer:b", "bearer:c", "session:d"} {
		for range clientShareOf(maxParked) {
			x := park(holder)
			if err := g.roomToPark(x); err != nil {
				t.Fatalf("call %d (client %s) refused: %v", len(g.parked)+1, holder, err)
			}
			g.parked[x.id] = x
		}
	}
	if err := g.roomToPark(park("session:e")); err == nil || !strings.Contains(err.Error(), "for all clients") {
		t.Fatalf("a call past the cap for all: %v; want refused naming that cap", err)
	}
}
