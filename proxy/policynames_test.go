package proxy

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate/config"
	"github.com/mcpgate/mcpgate/policy"
)

// namesSeen is a list policy that records the names it is shown.
type namesSeen struct{ names []string }

func (p *namesSeen) Name() string           { return "names-seen" }
func (p *namesSeen) Stages() []policy.Stage { return []policy.Stage{policy.List} }
func (p *namesSeen) Decide(_ context.Context, in *policy.Input) policy.Decision {
	p.names = append(p.names, in.Name)
	return policy.Decision{}
}

func policiesGateway(t *testing.T, p policy.Policy, names ...string) *Gateway {
	t.Helper()
	return policiesGatewayConfig(t, &config.Config{Namespace: true}, []policy.Policy{p}, names...)
}

func policiesGatewayConfig(t *testing.T, cfg *config.Config, extra []policy.Policy, names ...string) *Gateway {
	t.Helper()
	for _, n := range names {
		cfg.Servers = append(cfg.Servers, config.Server{Name: n, Type: config.TypeStdio, Command: "false", Timeout: time.Second, MaxTimeout: time.Second, InitTimeout: time.Second})
	}
	g, err := New(cfg, Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Policies: extra})
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// The list policies are shown each item under the name a client would see
// for it, whatever lists came before: a name remembered from the server's
// last list is that name (lists repeated, reordered, grown, shrunk, names
// too long to expose whole, listed twice).
func TestListPoliciesSeeExposedNames(t *testing.T) {
	seen := &namesSeen{}
	g := policiesGateway(t, seen, "a", "b")
	nt := g.live().names
	rng := rand.New(rand.NewPCG(3, 4))
	pool := []string{"read", "write", "x", strings.Repeat("long_", 14), "dup", "z"}
	var last []item
	for round := range 300 {
		up := g.live().upstreams[rng.IntN(2)]
		items := last
		if rng.IntN(3) == 0 || items == nil {
			var names []string
			for range 1 + rng.IntN(6) {
				names = append(names, pool[rng.IntN(len(pool))])
			}
			items = toolItems(t, names...)
		}
		last = items
		seen.names = seen.names[:0]
		up.applyListPolicies(context.Background(), kindTools, items)
		var want []string
		for _, it := range items {
			want = append(want, nt.expose(kindTools, up.name, it.shownName()))
		}
		if fmt.Sprint(seen.names) != fmt.Sprint(want) {
			t.Fatalf("round %d: the policies saw %q, want %q", round, seen.names, want)
		}
	}
}

// A list like the server's last is shown to the list policies under the
// names made for that one: a name apiece was 5,020 allocations a list of
// 5,020 tools. (The default poisoning check, whose verdicts are then
// remembered, allocates nothing per tool.)
func TestListPoliciesRepeatedListNamesNotMadeAgain(t *testing.T) {
	cfg := &config.Config{Namespace: true, Policies: []config.Policy{{Name: "poisoning", Path: "policies[0]", Enabled: true, Action: "audit"}}}
	g := policiesGatewayConfig(t, cfg, nil, "a")
	up := g.live().upstreams[0]
	var names []string
	for i := range 200 {
		names = append(names, fmt.Sprintf("tool_%03d", i))
	}
	items := toolItems(t, names...)
	apply := func() { up.applyListPolicies(context.Background(), kindTools, items) }
	apply()
	if allocs := testing.AllocsPerRun(5, apply); allocs > float64(len(items)/4) {
		t.Errorf("a list of %d tools like the last: %.0f allocations; want its names not made again", len(items), allocs)
	}
}
