// Package proxy is the MCP gateway: it connects to every configured upstream
// server as a client, and serves clients as one server whose tools, prompts
// and resources are the upstreams' own, named "server__name".
//
// Use it as a library in three steps (see the example):
//
//	g, err := proxy.New(cfg, proxy.Options{})    // cfg from config.Load
//	g.Start()                                    // connect upstreams in the background
//	err = g.Serve(ctx, stream, proxy.ServeOptions{}) // one client session; once per client
//	g.Close()                                    // stop every upstream
//
// stream is a jsonrpc.Stream: jsonrpc.NewLineStream over stdin and stdout
// for stdio. Package httpfront serves clients over HTTP with the same
// gateway. Statuses, Tools, WriteMetrics and AuditState report on it;
// Reload applies a changed config while clients are served.
//
// Data flow: a client's request arrives on its session's jsonrpc.Conn, is
// routed by name through the name table to one upstream (or fanned out to
// all of them for lists), sent there with an id the gateway mints, and the
// answer goes back with only names, URIs and tokens rewritten. What an
// upstream sends on its own (list_changed, progress, log messages) is
// relayed to the sessions it concerns.
package proxy

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"runtime/debug"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpgate/mcpgate/config"
	"github.com/mcpgate/mcpgate/jsonrpc"
	"github.com/mcpgate/mcpgate/policy"
)

// Options tune a Gateway. The zero value is usable.
type Options struct {
	// Logger receives the gateway's own log, with the config's ${VAR}
	// values hidden (see config.Config.Redact). Nil: slog.Default().
	Logger *slog.Logger
	// UpstreamStderr receives each line an upstream writes to its stderr,
	// prefixed with the server's name and redacted like the log, one Write
	// per line, from many goroutines at once: it must be safe for that, and
	// should not block (a slow writer holds up that server's stderr). Nil:
	// the lines go to Logger.
	UpstreamStderr io.Writer
	// Version is reported as serverInfo.version. Empty: "dev".
	Version string
	// Policies run after the config's, for every server: a program that
	// vendors mcpgate adds its own decisions here (see package policy).
	Policies []policy.Policy
	// Probe is for one-off operator views (mcpgate check, mcpgate tools):
	// a server with "isolation": "session" gets one instance at Start, as
	// if it were shared, so that Statuses and Tools report on it. False:
	// such servers start only for client sessions.
	Probe bool
	// StartupWait bounds how long a client's initialize waits for the
	// upstreams' first connection attempts, so that their capabilities and
	// instructions are in the answer. Zero: 10s.
	StartupWait time.Duration
	// Wardens, on Linux, starts each stdio server under a warden: this
	// program run again with WardenCommand (see there), which stops
	// everything the server started, even what left its process group,
	// and even when the gateway is killed. False, or elsewhere: servers are
	// started directly, each in a process group of its own.
	Wardens bool
}

// Gateway aggregates the configured upstream servers for any number of
// client sessions.
type Gateway struct {
	closeOnce sync.Once
	closeErr  error // Close's, for every call of it

	log         *slog.Logger
	stderr      io.Writer
	version     string
	startupWait time.Duration
	probe       bool
	wardens     bool // start stdio servers under wardens (Options.Wardens)
	audit       *auditLog
	redact      func(string) string // hides the config's ${VAR} values; see redact.go

	liveSet   atomic.Pointer[upstreamSet] // the config and servers in force; see live and Reload
	reloads   reloadState
	progress  *progressTable
	metrics   *metrics
	starts    *startGate    // start_concurrency
	callerSeq atomic.Uint64 // orders client requests in flight, to find the most recent
	draining  atomic.Bool   // see Drain

	ctx        context.Context // ends at Close; parent of connection attempts
	cancel     context.CancelFunc
	starting   sync.WaitGroup // the upstreams' supervisors
	background sync.WaitGroup // list refreshes and other work Close waits for; see goBackground
	bgMu       sync.Mutex     // orders adding background work before Close waits for it
	bgClosed   bool           // guarded by bgMu: no more background work
	lateBytes  atomic.Int64   // results held by decisions left running past their answers (decidelater.go)
	ready      chan struct{}  // closed when every first connection attempt ended
	warm       chan struct{}  // closed when ready, or the discovery cache answers for the servers not
	discovery  *discoveryCache

	clientOutboxes outboxShare // bounds what all client queues hold together (see outboxshare.go)

	mu           sync.Mutex
	sessions     map[*session]struct{}
	elicitations elicitationTable                  // url-mode elicitations → the session asked (see elicittable.go)
	pinReported  map[pinReport][32]byte            // definitions not as pinned, already told: by the hash told of
	subs         map[subKey]map[subscriber]string  // upstream URI → who is subscribed → URI as each used it
	subsOf       subscriptionIndex                 // subs by session and subscriber (see subcount.go)
	subsByUp     map[*upstream]map[string]struct{} // the URIs in subs, by upstream
	subscribing  map[subKey]*subscribing           // subscribes on their way upstream (see subinflight.go)
	listeners    map[*listener]struct{}            // open subscriptions/listen requests
	listenersBy  listenIndex                       // of listeners, which hear of what (see listenindex.go)
	parked       map[string]*exchange              // exchanges waiting for their clients' input, by id
	parkedOf     holderCounts                      // of parked, how many each client holds (see sharecount.go)
	listensOf    holderCounts                      // of listeners, how many each client holds

	stateKey  [32]byte // signs the requestState of exchanges
	replica   string   // names this process in them
	snapshots snapshotStore
}

// New builds a gateway for cfg and opens its audit trail. It starts nothing.
func New(cfg *config.Config, opts Options) (*Gateway, error) {
	c := *cfg
	c.SetDefaults() // a config built by hand, not by config.Load, gets them too
	cfg = &c
	g := &Gateway{
		log:         opts.Logger,
		stderr:      opts.UpstreamStderr,
		version:     opts.Version,
		startupWait: opts.StartupWait,
		probe:       opts.Probe,
		wardens:     opts.Wardens,
		progress:    newProgressTable(),
		metrics:     newMetrics(),
		starts:      newStartGate(cfg.StartConcurrency),
		ready:       make(chan struct{}),
		warm:        make(chan struct{}),
		sessions:    map[*session]struct{}{},
		subs:        map[subKey]map[subscriber]string{},
		listeners:   map[*listener]struct{}{},
		parked:      map[string]*exchange{},
	}
	g.stateKey, g.replica = newStateKey(cfg.Cluster)
	if g.log == nil {
		g.log = slog.Default()
	}
	set := newUpstreamSet(cfg)
	g.liveSet.Store(set) // filled in below, before anyone else sees g
	g.reloads.extra = opts.Policies
	g.redact = g.redactLive
	g.log = slog.New(&redactingHandler{next: g.log.Handler(), redact: g.redact})
	if g.version == "" {
		g.version = "dev"
	}
	if g.startupWait <= 0 {
		g.startupWait = 10 * time.Second
	}
	pols, err := compilePolicies(cfg, opts.Policies, policy.Env{Logger: g.log})
	if err != nil {
		return nil, err
	}
	for _, s := range cfg.Enabled() {
		u := g.newConfigured(s, pols[s.Name])
		set.upstreams = append(set.upstreams, u)
		set.byName[s.Name] = u
	}
	if len(set.upstreams) == 0 {
		return nil, errors.New("no enabled servers in the config: nothing to serve")
	}
	set.names = newNameTable(cfg.Namespace, set.upstreams)
	g.discovery = newDiscoveryCache(cfg, set.upstreams, g.log)
	if cfg.Audit.Path != "" {
		a, err := openAudit(cfg.Audit, g.log, g.redact)
		if err != nil {
			return nil, errors.New(g.redact(err.Error()))
		}
		g.audit = a
		g.recordConfig()
	}
	g.ctx, g.cancel = context.WithCancel(context.Background())
	return g, nil
}

// Start connects to every upstream at once, in the background. A server
// that fails is logged and reported to the requests that need it; the rest
// serve as usual.
func (g *Gateway) Start() {
	g.reloads.mu.Lock() // a reload starts its servers itself once this has
	defer g.reloads.mu.Unlock()
	g.reloads.started = true
	upstreams := g.live().upstreams
	ready := make([]<-chan struct{}, 0, len(upstreams))
	var warm []<-chan struct{} // what a client's first request waits for
	reap := false
	for _, u := range upstreams {
		if u.isolatedBase() {
			reap = true
			if g.probe {
				if inst, err := u.instanceFor(nil, nil); err == nil {
					ready = append(ready, inst.ready)
					warm = append(warm, inst.ready)
				}
			}
			continue
		}
		ready = append(ready, u.ready)
		if !g.discovery.covers(u) {
			warm = append(warm, u.ready)
		}
		g.startSupervisor(u)
	}
	if reap {
		g.startReaper()
	}
	g.goBackground(func() { g.discovery.run(g.ctx) })
	go func() {
		for _, r := range warm {
			<-r
		}
		close(g.warm)
		for _, r := range ready {
			<-r
		}
		close(g.ready)
	}()
}

// Logger is the gateway's log: Options.Logger, with every value a ${VAR}
// in the config expanded to shown as ${VAR} instead. Log through it
// whatever may quote the config.
func (g *Gateway) Logger() *slog.Logger { return g.log }

// Config is the configuration the gateway runs with: the one given to New,
// or to the last Reload that succeeded, with every default filled in.
func (g *Gateway) Config() *config.Config { return g.live().cfg }

// AuditState says how the audit trail fares: "ok", "failing" (writes fail;
// requests are still served, and their records lost), or "" without one.
func (g *Gateway) AuditState() string { return g.audit.state() }

// Ready is closed when every upstream's first connection attempt has ended.
func (g *Gateway) Ready() <-chan struct{} { return g.ready }

// Warm is closed when the lists can be answered without waiting any
// longer: every upstream's first connection attempt has ended, or its
// answers are in the discovery cache (config "cache_dir"). A client's
// first request waits (bounded) for it.
func (g *Gateway) Warm() <-chan struct{} { return g.warm }

// Close stops every upstream (stdin closed, then SIGTERM, then SIGKILL to
// its whole process group) and closes the audit trail. A second Close
// (a deferred one beside a shutdown path's) waits for the first and
// returns what it did.
//
// Call it once every Serve has returned: Serve waits for its session's
// requests in flight (within shutdown_grace, then a second for those it
// cancelled), each recorded before it is over (a record written after the
// answer is background work, which Close waits for). A request still
// being served when the trail closes loses its record (counted and logged
// as a failed write), and its server is stopped under it.
func (g *Gateway) Close() error {
	g.closeOnce.Do(func() { g.closeErr = g.close() })
	return g.closeErr
}

func (g *Gateway) close() error {
	g.endReloads()
	g.cancel()
	g.endExchanges()
	g.starting.Wait()
	g.stopAllInstances()
	g.bgMu.Lock()
	g.bgClosed = true
	g.bgMu.Unlock()
	g.stopTimers()
	g.background.Wait()
	var wg sync.WaitGroup
	for _, u := range g.live().upstreams {
		wg.Add(1)
		go func() {
			defer wg.Done()
			u.stop()
		}()
	}
	wg.Wait()
	g.closePolicies()
	return g.audit.close()
}

// ServeOptions describe one client session to Serve. The zero value suits
// a stream that is the whole session (stdio).
type ServeOptions struct {
	// SessionID names the session in logs and the audit trail: over HTTP,
	// the Mcp-Session-Id, so that they match what the client sees. Empty:
	// 128 random bits (Stateless: unique, see statelessid.go).
	SessionID string
	// Client names the client as the transport authenticated it (over
	// HTTP, a hash of its bearer token); empty when it cannot tell clients
	// apart. What mcpgate hands one client to continue a call with (a
	// requestState) is refused to another.
	Client string
	// Ended, if not nil, reports whether the client ended the session
	// itself (over HTTP, with DELETE): nobody waits for answers then, so
	// requests in flight are cancelled at once rather than given the
	// shutdown grace. It must say so before the stream ends: every answer
	// concluded after that is the DELETE error (see endedByClient).
	Ended func() bool
	// Stateless says the stream carries requests of the modern era that
	// belong to no session (over HTTP, a POST without a session id): the
	// audit trail records no session opened or closed for it, and servers
	// run once per session ("isolation": "session") refuse its requests,
	// since they have no session to be run for.
	Stateless bool
	// Checked, if not nil, is the stateless request as the transport
	// checked it (CheckModernRequest): its envelope is not read again.
	Checked *ModernRequest
}

// Serve runs one client session over stream until the client ends it or
// ctx is done. Requests in flight then get the config's shutdown_grace to
// finish; the rest are answered with an error. Serve may be called
// concurrently, once per client.
//
// A stream may also implement jsonrpc.RelatedWriter (to send a request's
// progress and the server's requests with its answer, as Streamable HTTP
// does), jsonrpc.MessageReader (when it has decoded what it reads), and
// NotificationWriter (to drop notifications it has no room for).
func (g *Gateway) Serve(ctx context.Context, stream jsonrpc.Stream, opts ServeOptions) error {
	s := newSession(g, stream, opts)
	g.mu.Lock()
	g.sessions[s] = struct{}{}
	g.mu.Unlock()
	if !s.stateless {
		g.audit.event("session_opened", "session", s.id)
	}
	opened := time.Now()
	defer func() {
		g.mu.Lock()
		delete(g.sessions, s)
		g.mu.Unlock()
		if !s.stateless {
			s.recordClosed(opened)
		}
		g.progress.dropSession(s)
		g.dropSubscriptions(s)
		g.dropElicitations(s)
		g.endSessionInstances(s)
	}()
	select {
	case <-s.conn.Done():
	case <-ctx.Done():
	}
	if h, ok := stream.(Handoff); ok {
		<-h.Handed()
	}
	if testHookClientLeft != nil {
		testHookClientLeft()
	}
	close(s.draining)
	grace := g.live().cfg.ShutdownGrace
	if opts.Ended != nil && opts.Ended() {
		grace = 0 // the client ended the session itself: nobody waits for answers
		s.deleted.Store(true)
	}
	err := s.conn.Wait(doneContext) // nil at once when nothing runs (a modern request's session, as a rule): no timer
	if err != nil {
		wctx, cancel := context.WithTimeout(context.Background(), grace)
		err = s.conn.Wait(wctx)
		cancel()
	}
	if err != nil {
		// Every pending request is answered: abandon what is left, and give
		// the handlers a moment to write their errors.
		if !s.deleted.Load() {
			g.log.Warn("requests still in flight after the shutdown grace period are answered with an error", "session", s.id, "grace", g.live().cfg.ShutdownGrace)
		}
		s.graceOver.Store(true)
		s.conn.CancelHandlers()
		wctx, cancel := context.WithTimeout(context.Background(), time.Second)
		s.conn.Wait(wctx)
		cancel()
	}
	s.closing.Store(true)
	s.conn.Close()
	if err := s.conn.Err(); err != nil && err != io.EOF && !errors.Is(err, jsonrpc.ErrClosed) {
		return err
	}
	return nil
}

// Handoff is a stream whose request another goroutine hands to the
// session (jsonrpc.DirectStream: an HTTP POST's). A session that ends
// before that (mcpgate shuts down) waits for it: a request handed later
// would start a handler after the session waited for its handlers, owned
// by nobody, and served after the gateway closed (its audit trail, its
// servers). Handed is closed once the request was handed, or found the
// session ended; it must not wait on the session's end.
type Handoff interface {
	Handed() <-chan struct{}
}

// doneContext is done from the start: Conn.Wait with it tells, without
// waiting, whether anything still runs.
var doneContext = func() context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return ctx
}()

// addBackground counts one piece of work that Close must wait for, unless
// Close has begun: then it reports false and the work is not to start.
func (g *Gateway) addBackground() bool {
	g.bgMu.Lock()
	defer g.bgMu.Unlock()
	if g.bgClosed {
		return false
	}
	g.background.Add(1)
	return true
}

// goBackground runs fn as background work (see addBackground).
func (g *Gateway) goBackground(fn func()) {
	if !g.addBackground() {
		return
	}
	go func() {
		defer g.background.Done()
		fn()
	}()
}

// stopTimers cancels pending list refreshes; a refresh already running ends
// soon, since its context is the gateway's.
func (g *Gateway) stopTimers() {
	for _, u := range g.live().upstreams {
		for _, c := range u.changes {
			c.stop()
		}
	}
}

// Status describes one upstream for operators (mcpgate check).
type Status struct {
	Name      string
	Transport string
	Connected bool
	Reason    string // why not connected
	Protocol  string
	Server    string // name and version the server reported
	InitTime  time.Duration
	// Isolated is true for a server with "isolation": "session": it runs
	// once per client session, Instances times now, and Connected reports
	// the instance of operator views (see Options.Probe), if any.
	Isolated  bool
	Instances int
}

// Statuses reports every upstream, in config order.
func (g *Gateway) Statuses() []Status {
	var out []Status
	for _, base := range g.live().upstreams {
		u := base
		if base.isolatedBase() {
			inst, ok := (*session)(nil).servingNoStart(base)
			if !ok {
				out = append(out, Status{Name: base.name, Transport: base.cfg.Type, Isolated: true, Instances: base.instanceCount(),
					Reason: "isolation \"session\": started for each client session"})
				continue
			}
			u = inst
		}
		u.mu.Lock()
		st := Status{Name: u.name, Transport: u.cfg.Type, Connected: u.state == stateConnected, Reason: u.reason, Isolated: base.isolatedBase()}
		if base.isolatedBase() {
			st.Instances = base.instanceCount()
		}
		if st.Connected {
			st.Protocol = u.init.ProtocolVersion
			st.Server = strings.TrimSpace(u.init.ServerInfo.Name + " " + u.init.ServerInfo.Version)
			st.InitTime = u.since
		}
		u.mu.Unlock()
		out = append(out, st)
	}
	return out
}

// Tool is one aggregated tool, for operator views.
type Tool struct {
	Name        string          `json:"name"`   // as clients see it
	Server      string          `json:"server"` // the upstream that offers it
	Original    string          `json:"upstream_name"`
	Description string          `json:"description,omitempty"`
	Raw         json.RawMessage `json:"-"`
	// Cached is when the discovery cache got the tool, if it comes from
	// there (its server was still starting); zero: its server listed it now.
	Cached time.Time `json:"-"`
}

// Tools asks every upstream for its tools and returns them merged, plus one
// error per upstream that could not answer. For an upstream still starting,
// the discovery cache answers, if it can (see Tool.Cached).
func (g *Gateway) Tools(ctx context.Context) ([]Tool, []error) {
	var out []Tool
	var errs []error
	for _, r := range g.fetchAll(ctx, kindTools) {
		if r.err != nil {
			errs = append(errs, redactError(r.err, g.redact))
			continue
		}
		if r.skipped {
			continue
		}
		for _, it := range r.items {
			var d struct {
				Description string `json:"description"`
			}
			json.Unmarshal(it.raw, &d)
			out = append(out, Tool{Name: g.live().names.exposed(kindTools, r.up, it.name), Server: r.up.name, Original: it.name, Description: d.Description, Raw: it.raw, Cached: r.cached})
		}
	}
	return out, errs
}

// Definition is one tool or prompt definition as a server sent it.
type Definition struct {
	Server string
	Kind   string // "tool" or "prompt"
	Raw    json.RawMessage
}

// Definitions asks every server for its tools and prompts and returns them
// as the servers sent them, before any filter or policy (what mcpgate lock
// pins), in config order, plus one error per server that could not answer.
func (g *Gateway) Definitions(ctx context.Context) ([]Definition, []error) {
	var out []Definition
	var errs []error
	for _, base := range g.live().upstreams {
		u, err := g.serving(ctx, base)
		if err == nil {
			_, err = u.connectionNoWait()
		}
		if err != nil {
			errs = append(errs, redactError(err, g.redact))
			continue
		}
		for _, k := range []kind{kindTools, kindPrompts} {
			if _, ok := u.capability(kinds[k].capability); !ok {
				continue
			}
			items, _, err := u.fetchPages(ctx, k, nil)
			if err != nil {
				errs = append(errs, redactError(err, g.redact))
				continue
			}
			for _, it := range items {
				out = append(out, Definition{Server: base.name, Kind: pinKind(k), Raw: it.raw})
			}
		}
	}
	return out, errs
}

// upstreamStderr passes on one line of an upstream's stderr. The line is
// the server's own, but what it prints is often what it was given (a
// token, a path): it is redacted like everything else mcpgate writes.
func (g *Gateway) upstreamStderr(server, line string) {
	line = g.redact(line)
	if g.stderr == nil {
		g.log.Info(line, "server", server, "stream", "stderr")
		return
	}
	fmt.Fprintf(g.stderr, "[%s] %s\n", server, line) // one Write: lines never interleave
}

// snapshotSessions returns the live, initialized sessions; callers write to
// them after the lock is released.
func (g *Gateway) snapshotSessions() []*session {
	g.mu.Lock()
	defer g.mu.Unlock()
	out := make([]*session, 0, len(g.sessions))
	for s := range g.sessions {
		if s.isInitialized() {
			out = append(out, s)
		}
	}
	return out
}

// recoverRequest turns a panic while serving one message into an internal
// error for that message, logged with its stack: a bug must be loud, but it
// must not take down every other client's session with it.
func (g *Gateway) recoverRequest(msg *jsonrpc.Message, err *error) {
	if r := recover(); r != nil {
		g.log.Error("BUG: panic while serving a message; please report it", "method", msg.Method, "panic", r, "stack", string(debug.Stack()))
		*err = jsonrpc.Errorf(jsonrpc.ErrInternal, "mcpgate internal error while serving %s (logged)", msg.Method)
	}
}

// newSessionID returns 128 random bits, hex-encoded.
func newSessionID() string {
	var b [16]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
