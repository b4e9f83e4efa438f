package proxy

import (
	"log/slog"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/mcpgate/mcpgate/config"
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
		g.parkExchange(x)
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
			g.parkExchange(x)
		}
	}
	if err := g.roomToPark(park("session:e")); err == nil || !strings.Contains(err.Error(), "for all clients") {
		t.Fatalf("a call past the cap for all: %v; want refused naming that cap", err)
	}
}

// A client is a token when several tell clients apart; one token shared
// by all tells none apart, so each session is a client of its own, and
// modern requests without a session are one client together.
func TestHolderIsTheTokenWhenTokensTellClientsApart(t *testing.T) {
	for _, c := range []struct {
		tokens    string
		client    string
		stateless bool
		want      string
	}{
		{`["token-aaaaaaaaaaaaaaaa", "token-bbbbbbbbbbbbbbbb"]`, "bearer:a", true, "bearer:a"},
		{`["token-aaaaaaaaaaaaaaaa", "token-bbbbbbbbbbbbbbbb"]`, "bearer:a", false, "bearer:a"},
		{`["token-aaaaaaaaaaaaaaaa"]`, "bearer:a", false, "session:s1"},
		{`["token-aaaaaaaaaaaaaaaa"]`, "bearer:a", true, ""},
		{`[]`, "", false, "session:s1"},
		{`[]`, "", true, ""},
	} {
		cfg, err := config.Load([]byte(`{"mcpServers": {"x": {"command": "true"}}, "policies": [], "auth": {"tokens": `+c.tokens+`}}`), "mcpgate.json", os.LookupEnv)
		if err != nil {
			t.Fatal(err)
		}
		g, err := New(cfg, Options{Logger: slog.New(slog.DiscardHandler)})
		if err != nil {
			t.Fatal(err)
		}
		s := &session{g: g, id: "s1", client: c.client, stateless: c.stateless}
		if got := s.holder(); got != c.want {
			t.Errorf("tokens %s, client %q, stateless %v: holder %q, want %q", c.tokens, c.client, c.stateless, got, c.want)
		}
		g.Close()
	}
}
