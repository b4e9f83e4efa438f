package policy

import (
	"context"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/mcpgate/mcpgate/config"
	"github.com/mcpgate/mcpgate/internal/detect/injection"
)

// poisoning checks each tool and prompt definition of a list: its name,
// title, description, parameter names and descriptions at any depth, enum
// values, defaults, examples and annotations, for injection markers,
// instructions to read secrets or files or to call other tools, and (for
// tools) names of other servers' tools or servers (shadowing). Block
// withholds the definition: the gateway leaves it out of the list and
// refuses calls to it. Resource and template definitions are not checked.
type poisoning struct {
	name     string
	action   string                    // actionAudit or actionBlock
	checker  func() *injection.Checker // built on first use, as builtOnFirstScan
	peers    peersCache
	verdicts verdictCache
}

func newPoisoning(spec config.Policy, _ Env) (Policy, error) {
	known := make([]string, len(injection.Kinds))
	for i, k := range injection.Kinds {
		known[i] = k.Name
	}
	if err := checkKinds(spec, known); err != nil {
		return nil, err
	}
	action, err := actionOf(spec, actionAudit, actionBlock)
	if err != nil {
		return nil, err
	}
	checker := injection.DefaultChecker
	if spec.Kinds != nil {
		c, err := injection.NewChecker(injection.Options{Disable: kindsLeftOut(spec.Kinds)})
		if err != nil {
			return nil, fmt.Errorf("%s: %v", spec.Path, err)
		}
		checker = func() *injection.Checker { return c }
	}
	return &poisoning{name: spec.Name, action: action, checker: checker}, nil
}

func (p *poisoning) Name() string    { return p.name }
func (p *poisoning) Stages() []Stage { return listStage }

// maxReasonPlaces bounds how many places an audit reason lists.
const maxReasonPlaces = 4

func (p *poisoning) Decide(_ context.Context, in *Input) Decision {
	if in.Kind != "tool" && in.Kind != "prompt" {
		return Decision{}
	}
	var peers *injection.Peers
	if in.Kind == "tool" && in.Peers != nil {
		peers = p.peers.get(in.Server, in.Peers)
	}
	index := -1
	if in.Stage == List {
		index = in.Index
	}
	found, err := p.verdicts.check(p.checker, in.Message, listOf{in.Server, in.Kind}, index, peers)
	if err != nil {
		// The checker's error names the problem, not the text.
		if p.action == actionBlock {
			return Decision{Action: Deny, Reason: refusal(in) + ": its definition could not be checked (not a JSON object, or nested too deeply)"}
		}
		return Decision{Action: Audit, Reason: err.Error()}
	}
	if len(found) == 0 {
		return Decision{}
	}
	var t tally
	var places []place
	for _, f := range found {
		i := slices.IndexFunc(t.findings, func(g Finding) bool { return g.Kind == f.Kind })
		if i < 0 {
			t.findings = append(t.findings, Finding{Kind: f.Kind})
			i = len(t.findings) - 1
		}
		t.findings[i].Count++
		where := placeOf(f)
		j := slices.IndexFunc(places, func(p place) bool { return p.where == where })
		if j < 0 {
			places = append(places, place{where: where})
			j = len(places) - 1
		}
		if !slices.Contains(places[j].kinds, f.Kind) {
			places[j].kinds = append(places[j].kinds, f.Kind)
		}
	}
	slices.SortFunc(t.findings, func(a, b Finding) int { return strings.Compare(a.Kind, b.Kind) })
	if p.action == actionBlock {
		// The client and the model see this: kinds only, no text and no
		// path (a parameter's name is the server's text).
		kinds := make([]string, len(t.findings))
		for i, f := range t.findings {
			kinds[i] = f.Kind
		}
		return Decision{Action: Deny, Findings: t.findings,
			Reason: refusal(in) + ": its definition shows signs of tool poisoning (" + strings.Join(kinds, ", ") + ")"}
	}
	// The audit trail is the operator's: it says where, so that the
	// definition can be looked at.
	var b strings.Builder
	b.WriteString("tool poisoning in " + in.Kind + " " + in.Name + ": ")
	for i, pl := range places {
		if i == maxReasonPlaces {
			fmt.Fprintf(&b, "; and %d more places", len(places)-i)
			break
		}
		if i > 0 {
			b.WriteString("; ")
		}
		b.WriteString(pl.where + " (" + strings.Join(pl.kinds, ", ") + ")")
	}
	return Decision{Action: Audit, Findings: t.findings, Reason: b.String()}
}

// place is where in a definition findings are, with their kinds.
type place struct {
	where string
	kinds []string
}

// maxPlaceLen bounds a JSON path in an audit reason: the path is made of
// the server's member names.
const maxPlaceLen = 80

func placeOf(f injection.DefinitionFinding) string {
	where := f.Path
	if len(where) > maxPlaceLen {
		where = strings.ToValidUTF8(where[:maxPlaceLen], "") + "…"
	}
	if f.Name {
		return "the member name " + where
	}
	return where
}

// peersCache keeps, per server, the index the checker needs of the other
// servers' tools: Input.Peers is the same for every tool of one list, and
// indexing it for each would cost the list's length squared. The same map
// is known by its identity; another one (the next fetch's) is compared
// once, and when it holds the same tools the index is kept, so that the
// verdicts made with it stay good.
type peersCache struct {
	mu   sync.Mutex
	by   map[string]peersEntry // by server; config servers only, so bounded
	last atomic.Pointer[lastPeers]
}

type peersEntry struct {
	src   map[string][]string // the Input.Peers it was last asked with: kept, so its address is not reused
	same  map[string][]string // a copy of what it was built from
	peers *injection.Peers
}

func (c *peersCache) get(server string, src map[string][]string) *injection.Peers {
	// Every tool of a list asks with the same server and map: the last
	// answer, read without the lock, answers all but the first.
	if l := c.last.Load(); l != nil && l.server == server && sameMap(l.src, src) {
		return l.peers
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.by[server]
	if ok && sameMap(e.src, src) {
		c.remember(server, e)
		return e.peers
	}
	if c.by == nil {
		c.by = map[string]peersEntry{}
	}
	if ok && maps.EqualFunc(e.same, src, slices.Equal) {
		e.src = src
		c.by[server] = e
		c.remember(server, e)
		return e.peers
	}
	// The gateway gives every server of a list the same map: one index
	// serves them all (one each was the index, thousands of tools, times
	// the servers).
	for _, other := range c.by {
		if sameMap(other.src, src) {
			c.by[server] = other
			c.remember(server, other)
			return other.peers
		}
	}
	cp := make(map[string][]string, len(src))
	for k, v := range src {
		cp[k] = slices.Clone(v)
	}
	e = peersEntry{src: src, same: cp, peers: injection.NewPeers(cp)}
	c.by[server] = e
	c.remember(server, e)
	return e.peers
}

// remember makes e server's last answer. (Guarded by mu.)
func (c *peersCache) remember(server string, e peersEntry) {
	c.last.Store(&lastPeers{server, e.src, e.peers})
}

// lastPeers is the last answer of a peersCache: by the time it is read it
// may be another's, so it is read whole, through one pointer.
type lastPeers struct {
	server string
	src    map[string][]string
	peers  *injection.Peers
}

// sameMap reports whether a and b are the same map (not merely equal).
func sameMap(a, b map[string][]string) bool {
	return reflect.ValueOf(a).UnsafePointer() == reflect.ValueOf(b).UnsafePointer()
}
