package proxy

import (
	"context"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpgate/mcpgate/config"
	"github.com/mcpgate/mcpgate/jsonrpc"
)

// A server configured with "isolation": "session" runs once per client
// session: an instance is started on the session's first request that
// needs it, serves that session only, and is stopped when the session
// ends, when it has been idle for the server's idle_timeout, or when
// mcpgate stops. Per-client state in the server, and the server's requests
// to the client (sampling, elicitation, roots), are then isolated by
// construction: an instance's requests can only be its session's.
//
// The configured server stays one upstream in g.live().upstreams (its "base"):
// the name table, merged lists and statuses know it by that. Each instance
// is an upstream of its own whose base is the configured one. Routes name
// the base; serving maps a base to the upstream that serves a session.

// instanceSet holds an isolated server's running instances, by session
// (nil: the instance that serves operator views, such as mcpgate tools).
type instanceSet struct {
	mu        sync.Mutex
	bySession map[*session]*upstream
	closed    bool // mcpgate is stopping: no new instances
}

func (u *upstream) isolatedBase() bool { return u.instances != nil }

// touch records that the instance was used now.
func (u *upstream) touch() { u.lastUsed.Store(time.Now().UnixNano()) }

// serving returns the upstream that serves the request ctx belongs to: the
// configured server itself, or, for an isolated one, the session's
// instance, started (and its first connection attempt awaited) if need
// be.
func (g *Gateway) serving(ctx context.Context, base *upstream) (*upstream, error) {
	if !base.isolatedBase() {
		return base, nil
	}
	var s *session
	if r, ok := requestFrom(ctx); ok {
		s = r.s
	}
	if s != nil && s.stateless {
		return nil, jsonrpc.Errorf(errUnavailable, "upstream %q runs once per client session (\"isolation\": \"session\"), and a request without a session has none to run it for: use a session (initialize) for this server", base.name)
	}
	hold, _ := ctx.Value(ctxHeldSetKey{}).(*setHold)
	inst, err := base.instanceFor(s, hold)
	if err != nil {
		return nil, err
	}
	inst.connectionCtx(ctx) // the first attempt: capabilities are known after it
	// Used now, not when the wait began: a start may take longer than
	// idle_timeout. (A request that is not a client's holds nothing, and
	// is not in flight, busy, until sent.)
	inst.touch()
	return inst, nil
}

// holdInstance keeps inst from being stopped as idle until the request
// that holds h ends: however long it takes between obtaining the instance
// and sending to it (policies, max_concurrent, a loaded machine), and
// whatever it sends meanwhile. The instance's set lock is held, under
// which the reaper decides.
func (h *setHold) holdInstance(inst *upstream) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.released.Load() || slices.Contains(h.instances, inst) {
		return
	}
	inst.users.Add(1)
	h.instances = append(h.instances, inst)
}

// releaseInstances ends the request's holds: its instances are used now,
// and idle from now on if nothing else uses them.
func (h *setHold) releaseInstances() {
	h.mu.Lock()
	held := h.instances
	h.instances = nil
	h.mu.Unlock()
	for _, inst := range held {
		inst.touch()
		inst.users.Add(-1)
	}
}

// servingNoStart is serving without starting anything: the session's
// instance if it has one.
func (s *session) servingNoStart(base *upstream) (*upstream, bool) {
	if !base.isolatedBase() {
		return base, true
	}
	base.instances.mu.Lock()
	defer base.instances.mu.Unlock()
	inst, ok := base.instances.bySession[s]
	return inst, ok
}

// instanceFor returns s's instance of base, starting one if there is none
// and max_instances allows. The instance is marked used under the set's
// lock: the idle reaper, which decides under the same lock, cannot take an
// instance from a request that has just obtained it.
func (base *upstream) instanceFor(s *session, hold *setHold) (*upstream, error) {
	set := base.instances
	set.mu.Lock()
	if inst, ok := set.bySession[s]; ok {
		inst.touch()
		if hold != nil {
			hold.holdInstance(inst)
		}
		set.mu.Unlock()
		return inst, nil
	}
	switch {
	case set.closed:
		set.mu.Unlock()
		return nil, jsonrpc.Errorf(errUnavailable, "upstream %q is stopped (mcpgate is shutting down)", base.name)
	case s != nil && s.closing.Load():
		set.mu.Unlock()
		return nil, jsonrpc.Errorf(errUnavailable, "upstream %q: the client session is ending, so no instance is started for it", base.name)
	case len(set.bySession) >= base.cfg.MaxInstances:
		n := len(set.bySession)
		set.mu.Unlock()
		base.log.Warn("isolated server: no instance for a new session, max_instances reached", "max_instances", base.cfg.MaxInstances)
		return nil, jsonrpc.Errorf(errUnavailable, "upstream %q runs one instance per client session and %d are running, its max_instances; try again when a session ends (or raise mcpServers.%s.max_instances)", base.name, n, base.name)
	}
	inst := newUpstream(base.g, base.cfg)
	inst.base, inst.owner = base, s
	inst.touch()
	if hold != nil {
		hold.holdInstance(inst)
	}
	ctx, cancel := context.WithCancel(base.g.ctx)
	inst.endSupervisor, inst.supervised = cancel, make(chan struct{})
	inst.mu.Lock()
	inst.attemptStarting() // before the supervisor runs: a caller waits for the attempt
	inst.mu.Unlock()
	set.bySession[s] = inst
	go func() {
		defer close(inst.supervised)
		inst.supervise(ctx)
	}()
	n := len(set.bySession)
	set.mu.Unlock()
	base.log.Info("isolated server: instance started for a session", "session", sessionName(s), "instances", n)
	return inst, nil
}

func sessionName(s *session) string {
	if s == nil {
		return "(operator view)"
	}
	return s.id
}

// stopInstance ends an instance: its supervisor first, so that nothing
// restarts it, then the server itself.
func (inst *upstream) stopInstance() {
	for _, c := range inst.changes {
		c.stop()
	}
	inst.endSupervisor()
	<-inst.supervised
	inst.stop()
}

// endSessionInstances stops the instances that served s.
func (g *Gateway) endSessionInstances(s *session) {
	var wg *sync.WaitGroup // made only when an instance stops: most sessions have none
	for _, base := range g.live().upstreams {
		if !base.isolatedBase() {
			continue
		}
		base.instances.mu.Lock()
		inst, ok := base.instances.bySession[s]
		delete(base.instances.bySession, s)
		n := len(base.instances.bySession)
		base.instances.mu.Unlock()
		if !ok {
			continue
		}
		if wg == nil {
			wg = new(sync.WaitGroup)
		}
		wg.Go(func() {
			inst.stopInstance()
			base.log.Info("isolated server: instance stopped, its session ended", "session", s.id, "instances", n)
		})
	}
	if wg != nil {
		wg.Wait()
	}
}

// stopAllInstances stops every instance and lets no new one start.
func (g *Gateway) stopAllInstances() {
	var wg sync.WaitGroup
	for _, base := range g.live().upstreams {
		if base.isolatedBase() {
			base.closeInstances(&wg)
		}
	}
	wg.Wait()
}

// closeInstances lets base start no more instances and stops those
// running, each stop counted in wg, and returns them.
func (base *upstream) closeInstances(wg *sync.WaitGroup) []*upstream {
	base.instances.mu.Lock()
	base.instances.closed = true
	all := base.instances.bySession
	base.instances.bySession = map[*session]*upstream{}
	base.instances.mu.Unlock()
	stopped := make([]*upstream, 0, len(all))
	for _, inst := range all {
		stopped = append(stopped, inst)
		wg.Add(1)
		go func() {
			defer wg.Done()
			inst.stopInstance()
		}()
	}
	return stopped
}

// reapIdleInstances stops instances unused for their server's
// idle_timeout, until the gateway stops. An instance with a request in
// flight or a resource subscription is not idle, however long ago it was
// last called. The session goes on: its next request starts a new one.
func (g *Gateway) reapIdleInstances(every time.Duration) {
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		select {
		case <-g.ctx.Done():
			return
		case <-tick.C:
		}
		for _, base := range g.live().upstreams {
			if !base.isolatedBase() {
				continue
			}
			for _, inst := range base.idleInstances() {
				inst.stopInstance()
				base.log.Info("isolated server: idle instance stopped", "session", sessionName(inst.owner), "idle_timeout", base.cfg.IdleTimeout)
			}
		}
	}
}

// idleInstances removes and returns the instances of base that are idle.
func (base *upstream) idleInstances() []*upstream {
	cutoff := time.Now().Add(-base.cfg.IdleTimeout).UnixNano()
	var idle []*upstream
	base.instances.mu.Lock()
	defer base.instances.mu.Unlock()
	for s, inst := range base.instances.bySession {
		if inst.lastUsed.Load() > cutoff || inst.users.Load() > 0 || inst.busy() {
			continue
		}
		delete(base.instances.bySession, s)
		idle = append(idle, inst)
	}
	return idle
}

// busy reports whether a client request is in flight to u or waiting for
// a place to be, a connection attempt is under way (a request may be
// waiting for it), or a client is
// subscribed to one of its resources.
func (u *upstream) busy() bool {
	u.mu.Lock()
	busy := len(u.callers) > 0 || u.attempt != nil || u.queued.Load() > 0
	u.mu.Unlock()
	if busy {
		return true
	}
	u.g.mu.Lock()
	defer u.g.mu.Unlock()
	return len(u.g.subsByUp[u]) > 0
}

// reapInterval is how often idle instances are looked for: often enough
// that none outlives its idle_timeout by more than a quarter of it.
func (g *Gateway) reapInterval() time.Duration {
	every := time.Duration(0)
	for _, u := range g.live().upstreams {
		if u.isolatedBase() {
			if d := min(u.cfg.IdleTimeout/4, time.Minute); every == 0 || d < every {
				every = d
			}
		}
	}
	return max(every, time.Millisecond)
}

// instanceCount is how many instances of an isolated server run.
func (base *upstream) instanceCount() int {
	base.instances.mu.Lock()
	defer base.instances.mu.Unlock()
	return len(base.instances.bySession)
}

// isolationFields are the upstream fields isolation needs; embedded in
// upstream so that they sit together.
type isolationFields struct {
	base          *upstream    // the configured server this serves; itself unless an instance
	owner         *session     // an instance's session; nil otherwise (and for operator views)
	instances     *instanceSet // an isolated configured server's instances; nil otherwise
	lastUsed      atomic.Int64 // unix nanoseconds of the last request (instances)
	users         atomic.Int32 // requests that obtained the instance and have not ended (instanceHold)
	endSupervisor context.CancelFunc
	supervised    chan struct{} // closed when an instance's supervisor has returned
	foundEra      string        // the era a probe found (config.ProtocolModern or ProtocolLegacy); "" when not known. Guarded by base.mu
	lastInit      initializeResult
	hadInit       bool // lastInit holds an instance's initialize answer; guarded by mu
}

// isolatedServer reports whether cfg asks for one instance per session.
func isolatedServer(cfg config.Server) bool { return cfg.Isolation == config.IsolationSession }

// applyOwnerLogLevel passes the level the instance's session chose with
// logging/setLevel to a newly connected instance, which missed it.
func (u *upstream) applyOwnerLogLevel(ctx context.Context, w *wire) {
	if u.owner == nil || w.isModern() {
		return // a modern server gets the level with each request
	}
	u.owner.mu.Lock()
	level := u.owner.logLevel
	u.owner.mu.Unlock()
	if _, ok := u.capability("logging"); !ok || level == "" {
		return
	}
	cctx, cancel := context.WithTimeout(ctx, u.cfg.Timeout)
	defer cancel()
	if _, err := w.conn.Call(cctx, methodSetLevel, mustJSON(map[string]string{"level": level})); err != nil {
		u.log.Warn("logging/setLevel for a new instance failed", "err", err)
	}
}

// anyConnected is connected, for an isolated server: any instance is.
func (u *upstream) anyConnected() bool {
	if !u.isolatedBase() {
		return u.connected()
	}
	u.instances.mu.Lock()
	defer u.instances.mu.Unlock()
	for _, inst := range u.instances.bySession {
		if inst.connected() {
			return true
		}
	}
	return false
}
