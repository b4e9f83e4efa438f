package proxy

import (
	"context"
	"errors"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpgate/mcpgate/config"
	"github.com/mcpgate/mcpgate/policy"
)

// A reload swaps the set of servers the gateway routes to. The set is
// read all over the package, on every request; it is immutable once
// published, and replaced whole through an atomic pointer, so that readers
// take no lock and never see half a change. A lock held only while copying
// was the alternative; with it every reader would have to remember to copy.
//
// A request holds the set that was live when it began (holdLive) until it
// ends. Routing always resolves against the live set, so once a new set is
// published no new request reaches a server it dropped; a server dropped
// is stopped only when every request that began under the old set has
// ended, or after shutdown_grace: a call routed to it before the swap
// finishes on it.

// upstreamSet is the config in force and the servers made from it.
type upstreamSet struct {
	cfg       *config.Config // every default filled in (see config.Config.SetDefaults)
	upstreams []*upstream    // config order
	byName    map[string]*upstream
	names     *nameTable
	// replaced is the config this set replaced: its ${VAR} values stay
	// hidden too, since the servers it started may still be finishing.
	replaced *config.Config

	holds    atomic.Int64 // requests that began under this set and have not ended
	retired  atomic.Bool  // a newer set is live
	released chan struct{}
	once     sync.Once // closes released: retired, and holds at zero
}

func newUpstreamSet(cfg *config.Config) *upstreamSet {
	return &upstreamSet{cfg: cfg, byName: map[string]*upstream{}, released: make(chan struct{})}
}

// live is the set in force.
func (g *Gateway) live() *upstreamSet { return g.liveSet.Load() }

type ctxHeldSetKey struct{}

// letGoOfServers ends the hold of the request ctx serves on the server set
// it began under: for a request that lives on once it has been routed (a
// listen), so that a reload's removed servers need not wait for its end.
func letGoOfServers(ctx context.Context) {
	if h, ok := ctx.Value(ctxHeldSetKey{}).(*setHold); ok {
		h.release()
	}
}

// setHold is a request's hold on a server set (see holdLive), released
// once, whichever of its end or letGoOfServers comes first.
type setHold struct {
	set      *upstreamSet
	released atomic.Bool

	mu        sync.Mutex
	instances []*upstream // the isolated instances the request uses (holdInstance)
}

func (h *setHold) release() {
	if h.released.CompareAndSwap(false, true) {
		h.set.release()
		h.releaseInstances()
	}
}

// holdLive keeps the live set's servers running until its release is
// called (see above), and returns it. A set retired between the load and
// the count is let go, and the newer one held instead.
func (g *Gateway) holdLive() *upstreamSet {
	for {
		set := g.live()
		set.holds.Add(1)
		if g.live() == set {
			return set
		}
		set.release()
	}
}

func (set *upstreamSet) release() {
	if set.holds.Add(-1) == 0 && set.retired.Load() {
		set.once.Do(func() { close(set.released) })
	}
}

// retire marks the set as replaced: released is closed once no request
// holds it.
func (set *upstreamSet) retire() {
	set.retired.Store(true)
	if set.holds.Load() == 0 {
		set.once.Do(func() { close(set.released) })
	}
}

// redactLive hides the ${VAR} values of the config in force and of the one
// it replaced.
func (g *Gateway) redactLive(s string) string {
	set := g.live()
	s = set.cfg.Redact(s)
	if set.replaced != nil {
		s = set.replaced.Redact(s)
	}
	return s
}

// reloadState orders reloads with Start and Close.
type reloadState struct {
	// serial lets one reload run at a time, its records included, so that
	// the audit trail has them in the order they took effect. Close does
	// not wait for it: only for mu, which a reload holds while it swaps
	// the servers, never across I/O.
	serial  sync.Mutex
	mu      sync.Mutex // guards the fields below
	started bool       // Start has run: a reload starts the servers it adds
	closed  bool       // Close has begun: no more reloads
	reaping bool       // the idle instance reaper runs
	extra   []policy.Policy
}

// endReloads lets no reload begin after Close has.
func (g *Gateway) endReloads() {
	g.reloads.mu.Lock()
	g.reloads.closed = true
	g.reloads.mu.Unlock()
}

// newConfigured makes the upstream of a configured server.
func (g *Gateway) newConfigured(s config.Server, sp *serverPolicies) *upstream {
	u := newUpstream(g, s)
	u.policies.Store(sp)
	if isolatedServer(s) {
		u.instances = &instanceSet{bySession: map[*session]*upstream{}}
		close(u.ready) // nothing to wait for: instances start with sessions
	}
	return u
}

// startSupervisor keeps u connected until the gateway closes or a reload
// retires u (endSupervisor).
func (g *Gateway) startSupervisor(u *upstream) {
	// Under way before any request can look: a call routed by a cached
	// name waits for this attempt, not fails as if it had failed.
	u.mu.Lock()
	u.attemptStarting()
	u.mu.Unlock()
	ctx, cancel := context.WithCancel(g.ctx)
	u.endSupervisor, u.supervised = cancel, make(chan struct{})
	g.starting.Add(1)
	go func() {
		defer g.starting.Done()
		defer close(u.supervised)
		u.supervise(ctx)
	}()
}

// startReaper starts the idle instance reaper, once. g.reloads.mu held.
func (g *Gateway) startReaper() {
	if g.reloads.reaping {
		return
	}
	g.reloads.reaping = true
	g.starting.Add(1)
	go func() {
		defer g.starting.Done()
		g.reapIdleInstances(g.reapInterval())
	}()
}

// Reload makes cfg (from config.Load) the gateway's config, while clients
// are being served:
//
//   - a server added is started, and one removed is stopped once the
//     requests routed to it before the reload have ended (at most
//     shutdown_grace later); a server whose settings changed is both: the
//     new one serves from now on, the old one finishes what it has;
//   - a server left as it was keeps its connection, subscriptions and
//     requests in flight; a change to only its policies, filters or pin
//     applies to it at once, and its lists are fetched again;
//   - gateway settings that can change while running do (timeouts,
//     policies, page_size, audit.include_bodies); the others (listen and
//     the rest of HTTP, auth, namespace, max_message_bytes, the audit
//     trail's file and rotation) keep their old value until mcpgate
//     restarts, and are reported in Changes.NeedRestart;
//   - clients are sent list_changed for the lists that a server added,
//     removed or changed took part in.
//
// An invalid config is refused whole, with every problem (a
// config.ErrorList), and the running config goes on. Each reload is logged
// and recorded in the audit trail ("config_reload") with what changed and
// the new config's sha256, never a value. Reloads run one at a time.
func (g *Gateway) Reload(cfg *config.Config) (Changes, error) {
	c := *cfg
	c.Servers = slices.Clone(c.Servers) // SetDefaults writes to them
	c.SetDefaults()
	cfg = &c
	g.reloads.serial.Lock()
	defer g.reloads.serial.Unlock()
	if g.reloadsClosed() {
		return Changes{}, errStoppingReload
	}
	old := g.live() // only a reload swaps it, and this one is the only one
	ch, eff, err := diffConfigs(old.cfg, cfg)
	var pols map[string]*serverPolicies
	if err == nil {
		pols, err = compilePolicies(eff, g.reloads.extra, policy.Env{Logger: g.log})
	}
	if err == nil && len(eff.Enabled()) == 0 {
		err = errors.New("no enabled servers in the config: nothing to serve")
	}
	if err != nil {
		err = redactProblems(err, g.redactWith(cfg))
		g.ReloadRejected(cfg.File, err)
		return Changes{}, err
	}

	g.reloads.mu.Lock()
	if g.reloads.closed {
		g.reloads.mu.Unlock()
		for _, sp := range pols {
			g.closeOwnPolicies(sp)
		}
		return Changes{}, errStoppingReload
	}
	g.swap(old, eff, pols)
	g.reloads.mu.Unlock()
	g.recordReload(ch)
	return ch, nil
}

// errStoppingReload refuses a reload once Close has begun.
var errStoppingReload = errors.New("mcpgate is stopping: the config is not reloaded")

func (g *Gateway) reloadsClosed() bool {
	g.reloads.mu.Lock()
	defer g.reloads.mu.Unlock()
	return g.reloads.closed
}

// swap makes eff the running config: the servers it adds start, those it
// removes stop once their requests end, and clients hear of the lists that
// changed. g.reloads.mu held; nothing here waits for I/O.
func (g *Gateway) swap(old *upstreamSet, eff *config.Config, pols map[string]*serverPolicies) {
	eff.AlsoHide(old.cfg) // every value since the start, however many reloads ago
	set := newUpstreamSet(eff)
	set.replaced = old.cfg
	before := map[string]config.Server{}
	for _, s := range old.cfg.Enabled() {
		before[s.Name] = s
	}
	var added, gone []*upstream
	successor := map[*upstream]*upstream{} // a changed server's old upstream → its new one
	var relist []*upstream                 // kept servers whose policies changed
	var stale []*serverPolicies            // replaced: closed once the requests that may use them have ended
	for _, s := range eff.Enabled() {
		sp := pols[s.Name]
		u, kept := old.byName[s.Name]
		if kept && sameConnection(before[s.Name], s) {
			if samePolicies(old.cfg, before[s.Name], eff, s, u.policies.Load(), sp) {
				g.closeOwnPolicies(sp)
			} else {
				stale = append(stale, u.policies.Swap(sp))
				relist = append(relist, u)
			}
		} else {
			nu := g.newConfigured(s, sp)
			added = append(added, nu)
			if kept {
				successor[u] = nu
				gone = append(gone, u)
			}
			u = nu
		}
		set.upstreams = append(set.upstreams, u)
		set.byName[s.Name] = u
	}
	for _, u := range old.upstreams {
		if _, ok := set.byName[u.name]; !ok {
			gone = append(gone, u)
		}
	}
	set.names = newNameTable(eff.Namespace, set.upstreams)
	set.names.carryOver(old.names)
	g.audit.setBodies(eff.Audit.IncludeBodies)
	g.discovery.setTTL(eff.CacheTTL)
	g.discovery.follow(added, gone)

	g.liveSet.Store(set) // from here on, requests are routed to the new servers

	for _, u := range gone {
		u.stopSupervising()
		for _, c := range u.changes {
			c.stop() // a list refresh of its own would now tell clients of a list they no longer see
		}
	}
	if g.reloads.started {
		for _, u := range added {
			if u.isolatedBase() {
				g.startReaper()
			} else {
				g.startSupervisor(u)
			}
		}
	}
	g.moveSubscriptions(successor)
	g.notifyGone(old, gone)
	for _, u := range relist {
		u.policiesChanged(set.names)
	}
	g.retire(old, gone, stale)
}

// stopSupervising stops reconnecting u: a retired server is not started
// again, even if it fails while it finishes its requests. Its connection
// stays open. (Start may not have run: then there is nothing to end.)
func (u *upstream) stopSupervising() {
	u.retired.Store(true)
	if u.endSupervisor != nil {
		u.endSupervisor()
	}
}

// stopReason says why u's start was given up, or why it is stopped: a
// reload retired it, or mcpgate is stopping.
func (u *upstream) stopReason() string {
	if u.retired.Load() {
		return "a config reload removed or replaced it"
	}
	return "mcpgate is shutting down"
}

// setBodies changes audit.include_bodies.
func (a *auditLog) setBodies(on bool) {
	if a != nil {
		a.bodies.Store(on)
	}
}

// retire stops the servers gone, and closes the policies replaced, once
// the requests that began under the old set have ended, or shutdown_grace
// has passed, or mcpgate is stopping; in the background, owned by the
// gateway (Close waits for it).
func (g *Gateway) retire(old *upstreamSet, gone []*upstream, stale []*serverPolicies) {
	old.retire()
	if len(gone) == 0 && len(stale) == 0 {
		return
	}
	stop := func() {
		grace := g.live().cfg.ShutdownGrace
		timer := time.NewTimer(grace)
		select {
		case <-old.released:
		case <-timer.C:
			g.log.Warn("config reload: requests that began before it were still in flight after the shutdown grace period; the servers and policies it replaced are stopped anyway", "grace", grace)
		case <-g.ctx.Done():
		}
		timer.Stop()
		for _, sp := range stale {
			g.closeOwnPolicies(sp)
		}
		var wg sync.WaitGroup
		for _, u := range gone {
			wg.Add(1)
			go func() {
				defer wg.Done()
				g.stopRetired(u)
			}()
		}
		wg.Wait()
	}
	if !g.addBackground() {
		stop() // Close has begun: g.ctx is done, so this does not wait
		return
	}
	go func() {
		defer g.background.Done()
		stop()
	}()
}

// stopRetired stops a server a reload removed or replaced, and its
// instances, and forgets the subscriptions to it.
func (g *Gateway) stopRetired(u *upstream) {
	retired := []*upstream{u}
	if u.isolatedBase() {
		var wg sync.WaitGroup
		retired = append(retired, u.closeInstances(&wg)...)
		wg.Wait()
	}
	if u.supervised != nil {
		<-u.supervised
	}
	u.stop()
	// Its own subscriptions only: walking every server's, under g.mu,
	// would cost each retired server all of them.
	g.mu.Lock()
	for _, up := range retired {
		for uri := range g.subsByUp[up] {
			g.deleteSubscriptionKey(subKey{up, uri})
		}
	}
	g.mu.Unlock()
	g.closeOwnPolicies(u.policies.Load())
	u.log.Info("upstream stopped: a config reload removed or replaced it")
	u.recordEvent("upstream_retired")
}

// moveSubscriptions hands the resource subscriptions of each changed
// server to its successor, which subscribes again once connected.
func (g *Gateway) moveSubscriptions(successor map[*upstream]*upstream) {
	moved := map[*upstream]bool{}
	g.mu.Lock()
	g.followMoves(successor)
	for key := range g.subs {
		if nu, ok := successor[key.up]; ok {
			g.moveSubscriptionKey(key, subKey{up: nu, uri: key.uri})
			moved[nu] = true
		}
	}
	g.mu.Unlock()
	for nu := range moved {
		g.goBackground(func() {
			select {
			case <-nu.ready:
			case <-g.ctx.Done():
				return
			}
			if nu.connected() {
				nu.resubscribe()
			}
		})
	}
}

// notifyGone tells clients that the lists the servers gone took part in
// changed: once per list, and only for lists a client could have seen
// (fetched since the server connected). The servers that replace changed
// ones say so again when they connect (upstreamCame).
func (g *Gateway) notifyGone(old *upstreamSet, gone []*upstream) {
	for _, k := range []kind{kindTools, kindPrompts, kindResources} {
		for _, u := range gone {
			if old.names.knows(k, u) || (k == kindResources && old.names.knows(kindTemplates, u)) {
				u.notifyListChanged(k)
				break
			}
		}
	}
}

// policiesChanged fetches again, in the background, the lists of a kept
// server whose policies a reload changed, and tells clients of those that
// came out different.
func (u *upstream) policiesChanged(names *nameTable) {
	targets := []*upstream{u}
	if u.isolatedBase() {
		u.instances.mu.Lock()
		targets = targets[:0]
		for _, inst := range u.instances.bySession {
			targets = append(targets, inst)
		}
		u.instances.mu.Unlock()
	}
	for _, k := range []kind{kindTools, kindPrompts, kindResources} {
		if !names.knows(k, u) && !(k == kindResources && names.knows(kindTemplates, u)) {
			continue // no client has seen it: nothing can have changed for them
		}
		for _, t := range targets {
			t.listChanged(k)
		}
	}
}

// closeOwnPolicies ends what the config's policies in sp keep running;
// the program's own (Options.Policies), at the end of every chain, are
// the program's to close.
func (g *Gateway) closeOwnPolicies(sp *serverPolicies) {
	if sp == nil {
		return
	}
	closeChain(sp.chain[:len(sp.chain)-len(g.reloads.extra)])
}

// carryOver copies what t's servers that were in from knew: their lists
// and the URIs they returned, so that a kept server's names route at once,
// as before the reload.
func (t *nameTable) carryOver(from *nameTable) {
	from.mu.RLock()
	t.mu.Lock()
	for _, up := range t.order {
		for k := range numKinds {
			if items, ok := from.known[k][up]; ok {
				t.known[k][up] = items
			}
		}
		if m, ok := from.returned[up]; ok {
			t.returned[up] = m
		}
	}
	t.mu.Unlock()
	from.mu.RUnlock()
	for k := range numKinds {
		t.rebuild(k) // the lists came without a fetch: update would see nothing new
	}
}

// redactWith hides the ${VAR} values of cfg as well as those redactLive
// hides: for the problems of a config that never went live.
func (g *Gateway) redactWith(cfg *config.Config) func(string) string {
	return func(s string) string { return g.redactLive(cfg.Redact(s)) }
}

// redactProblems redacts each problem of a config.ErrorList, keeping the
// list, or else the error's text.
func redactProblems(err error, redact func(string) string) error {
	var list config.ErrorList
	if errors.As(err, &list) {
		out := make(config.ErrorList, len(list))
		for i, p := range list {
			p.Msg = redact(p.Msg)
			out[i] = p
		}
		return out
	}
	return errors.New(redact(err.Error()))
}

// ReloadRejected logs and records in the audit trail a reload refused:
// every problem with the config from file. Reload calls it; so does a
// program whose config did not load (config.Load's error), so that each
// attempt is on record. The running config goes on.
func (g *Gateway) ReloadRejected(file string, err error) {
	var problems []string
	var list config.ErrorList
	if errors.As(err, &list) {
		for _, p := range list {
			problems = append(problems, p.Error())
		}
	} else {
		problems = []string{err.Error()}
	}
	for _, p := range problems {
		g.log.Error("config reload rejected", "problem", p)
	}
	g.log.Error("config reload rejected: the running config goes on; fix the config and reload again", "config", file, "problems", len(problems))
	g.audit.event("config_reload", "outcome", "rejected", "config", file, "problems", problems)
}

// recordReload logs and audits a reload that was applied.
func (g *Gateway) recordReload(ch Changes) {
	g.log.Info("config reloaded", "config", ch.Config, "config_sha256", ch.SHA256, "added", ch.Added, "removed", ch.Removed, "changed", ch.Changed, "settings", ch.Settings)
	for _, key := range ch.NeedRestart {
		g.log.Warn("config reload: this setting changed, and takes effect only when mcpgate restarts; its old value stays in force", "setting", key)
	}
	g.audit.event("config_reload", "outcome", "applied", "config", ch.Config, "config_sha256", ch.SHA256,
		"added", ch.Added, "removed", ch.Removed, "changed", ch.Changed, "settings", ch.Settings, "restart_needed", ch.NeedRestart)
}
