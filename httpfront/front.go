// Package httpfront serves MCP clients over HTTP in front of a
// proxy.Gateway: the Streamable HTTP transport (protocol 2025-03-26 and
// later) at one path, the older HTTP+SSE transport (2024-11-05) at /sse,
// and /healthz, /readyz and /metrics. It is built on the gateway's exported
// API only: each client session is a jsonrpc.Stream handed to
// Gateway.Serve.
//
//	g.Start()
//	front := httpfront.New(g, "127.0.0.1:8931")
//	srv := &http.Server{Addr: "127.0.0.1:8931", Handler: front}
//	srv.RegisterOnShutdown(front.Close)
//	go srv.ListenAndServe()
//	...
//	front.Close() // lets requests in flight finish within shutdown_grace
//	srv.Shutdown(ctx)
//	g.Close()
//
// How it works: a POST carries one message and is answered with JSON, or
// with an event stream when related messages (progress, the server's
// requests) come before the answer; GET opens the session's stream for
// everything else; DELETE ends the session. Sessions share the upstreams;
// everything else is per session. A POST whose body carries the MCP
// 2026-07-28 envelope belongs to no session: its headers are checked
// against its body (modern.go, with package mcpheader), and it is served
// as a session of its own that ends with it (stateless.go).
package httpfront

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpgate/mcpgate/proxy"

	"github.com/mcpgate/mcpgate/config"
	"github.com/mcpgate/mcpgate/jsonrpc"
)

const (
	headerSession  = "Mcp-Session-Id"
	headerProtocol = "Mcp-Protocol-Version"
	// bodyReadTimeout bounds reading one request body.
	bodyReadTimeout = time.Minute
	// methodInitialize opens a session: the one request that may come
	// without a session id.
	methodInitialize = "initialize"
	// batchVersion is the one protocol version with JSON-RPC batches.
	batchVersion = "2025-03-26"
)

// Front serves MCP clients over HTTP. Make it with New; it is an
// http.Handler for every path (MCP, the legacy SSE endpoints, /healthz,
// /readyz, /metrics).
type Front struct {
	g    *proxy.Gateway
	cfg  config.HTTP
	mux  *http.ServeMux
	addr string // the listen address, for the default allowed hosts

	// A POST to cfg.Path is served without the mux's match when
	// postDirect (the mux would pick its handler, serveMCP behind guard).
	postDirect bool
	// allowedHost is the last Host value found allowed: the one a client
	// sends on every request, checked once.
	allowedHost atomic.Pointer[string]
	// clients name the clients of cfg.Tokens, in order (see clientOf).
	clientsOnce sync.Once
	clients     []string

	bodyTimeout  time.Duration // bounds reading one request body: bodyReadTimeout
	bodies       bodyBudget    // bounds the request bodies read at once
	keptNotes    keptNotes     // bounds the notifications kept for sessions' GET streams, all together
	writeTimeout time.Duration // bounds each write to a client: clientWriteTimeout
	keepAlive    time.Duration // how often a quiet modern event stream gets a comment: keepAliveEvery
	maxStateless int           // bounds the modern requests in flight but listens: maxStatelessRequests
	// serverBoundsBodies: the http.Server's ReadTimeout bounds each body
	// (BoundBodies), and the front sets no read deadline for it.
	serverBoundsBodies bool

	// sessionsCtx is every session's Serve context: Close cancels it, and
	// each session then gets the shutdown grace for its requests in flight.
	sessionsCtx context.Context
	endSessions context.CancelFunc

	mu                sync.Mutex
	sessions          map[string]*httpSession
	listens           int            // modern subscriptions/listen streams open: they count with sessions against max_sessions
	statelessInFlight int            // other modern requests being served: at most maxStatelessRequests
	statelessOf       map[string]int // of them, each client's, when tokens tell clients apart (see statelessshare.go)
	closed            bool           // shutting down: no new sessions or requests
	serving           sync.WaitGroup // each session's Serve goroutine, and each modern request's
	stop              chan struct{}  // closed by Close: ends the janitor
	janitor           sync.WaitGroup
}

// New builds the HTTP front for g, configured by the gateway's config
// (its HTTP section, max_message_bytes and shutdown_grace). listenAddr is
// where it will be served (for the default allowed Host values).
func New(g *proxy.Gateway, listenAddr string) *Front {
	cfg := g.Config().HTTP
	f := &Front{g: g, cfg: cfg, addr: listenAddr, bodyTimeout: bodyReadTimeout, writeTimeout: clientWriteTimeout, keepAlive: keepAliveEvery, maxStateless: maxStatelessRequests, sessions: map[string]*httpSession{}, stop: make(chan struct{})}
	f.bodies.max = max(bodyBudgetBytes, heldCost(g.Config().MaxMessage)+1) // one request of any allowed size fits, held while it runs
	f.sessionsCtx, f.endSessions = context.WithCancel(context.Background())
	f.mux = http.NewServeMux()
	f.mux.Handle(cfg.Path, f.guard(http.HandlerFunc(f.serveMCP)))
	f.mux.Handle("GET /sse", f.guard(http.HandlerFunc(f.serveLegacyStream)))
	f.mux.Handle("POST /messages", f.guard(http.HandlerFunc(f.serveLegacyPost)))
	// Health and readiness need no token (probes have none), but they pass
	// the Host and Origin checks: readiness names the servers, which a page
	// rebound to a local address must not read.
	f.mux.Handle("GET /healthz", f.checkOrigin(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok\n") })))
	f.mux.Handle("GET /readyz", f.checkOrigin(http.HandlerFunc(f.serveReady)))
	f.mux.Handle("GET /metrics", f.guard(g.MetricsHandler()))
	_, pattern := f.mux.Handler(&http.Request{Method: http.MethodPost, URL: &url.URL{Path: cfg.Path}})
	f.postDirect = pattern == cfg.Path
	f.janitor.Add(1)
	go f.expireIdle()
	return f
}

func (f *Front) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	// Every answer is written within writeTimeout of the request, or of
	// each message for those that wait or stream (they set their own).
	// This also clears a deadline an earlier request on the connection set.
	now := time.Now()
	written := now.Add(f.writeTimeout)
	setWriteDeadline(w, written)
	if r.ContentLength != 0 && !f.serverBoundsBodies {
		// A body that stalls must not hold the connection, whichever
		// handler runs: net/http reads what a handler left of it before
		// answering. net/http lifts the deadline once the body is read
		// to its end (it then starts its background read), so that an
		// answer streamed later is not cut.
		setReadDeadline(w, now.Add(f.bodyTimeout))
	}
	if f.postDirect && r.Method == http.MethodPost && r.URL.Path == f.cfg.Path {
		// Every call: what the mux would pick, without its match, and
		// told the write deadline just set.
		if f.admitted(w, r) {
			f.servePost(w, r, written)
		}
		return
	}
	f.mux.ServeHTTP(w, r)
}

// BoundBodies has srv, the one http.Server serving the front, bound each
// request's body: its ReadTimeout is set to the front's bound. net/http
// sets that deadline on every request anyway (clearing the header's), and
// lifts it as the body ends, as it lifts the front's: a deadline of the
// front's own is then a timer's reset more on every request, and is not
// set. Call it before srv serves.
func (f *Front) BoundBodies(srv *http.Server) {
	srv.ReadTimeout = f.bodyTimeout
	f.serverBoundsBodies = true
}

// Close shuts the sessions down as stdio's end does: no new sessions or
// requests are taken; requests in flight get the config's shutdown_grace to
// finish and are answered on their own POSTs (those still running then get
// an error carrying their id); then every session and its streams end, so
// http.Server.Shutdown can finish. Call Close before Shutdown: the listener
// stays open meanwhile, so that clients can still answer what their
// requests in flight ask them (sampling, elicitation) or cancel them, and
// are told 503 rather than refused. Every call waits until the sessions
// are done, whoever started closing (http.Server.Shutdown calls it too).
func (f *Front) Close() {
	f.mu.Lock()
	first := !f.closed
	f.closed = true
	f.mu.Unlock()
	if first {
		close(f.stop)
		f.endSessions()
	}
	f.serving.Wait()
	f.janitor.Wait()
}

// closing reports whether Close has begun.
func (f *Front) closing() bool {
	// f.stop, not f.closed: asked on every request, it takes no lock.
	// Close closes it right after setting f.closed.
	select {
	case <-f.stop:
		return true
	default:
		return false
	}
}

// errShuttingDown answers a request that comes once Close has begun.
var errShuttingDown = jsonrpc.Errorf(jsonrpc.ErrInternal, "mcpgate is shutting down: it takes no new requests")

// serveReady reports which upstreams are connected, without reasons: those
// can hold paths and other details that an unauthenticated caller need not see.
func (f *Front) serveReady(w http.ResponseWriter, r *http.Request) {
	type server struct {
		Name      string `json:"name"`
		Connected bool   `json:"connected"`
	}
	var out struct {
		Ready   bool     `json:"ready"`
		Audit   string   `json:"audit,omitempty"` // "ok" or "failing"; absent without an audit trail
		Servers []server `json:"servers"`
	}
	out.Audit = f.g.AuditState()
	for _, st := range f.g.Statuses() {
		// A server run once per session starts on demand: it is ready.
		out.Ready = out.Ready || st.Connected || st.Isolated
		out.Servers = append(out.Servers, server{st.Name, st.Connected})
	}
	if f.closing() || f.g.Draining() {
		out.Ready = false // draining: send new clients elsewhere
	}
	w.Header().Set("Content-Type", "application/json")
	if !out.Ready {
		w.WriteHeader(http.StatusServiceUnavailable)
	}
	json.NewEncoder(w).Encode(out)
}
