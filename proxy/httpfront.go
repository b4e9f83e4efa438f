package proxy

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/mcpgate/mcpgate/internal/rawjson"

	"github.com/mcpgate/mcpgate/config"
	"github.com/mcpgate/mcpgate/jsonrpc"
)

// The client-facing Streamable HTTP transport (protocol 2025-03-26 and
// later): POST carries one message and is answered with JSON, or with an SSE
// stream when related messages (progress, server requests) come before the
// answer; GET opens the session's stream for everything else; DELETE ends
// the session. Sessions share the upstreams; everything else is per session.

const (
	headerSession  = "Mcp-Session-Id"
	headerProtocol = "Mcp-Protocol-Version"
	// bodyReadTimeout bounds reading one request body.
	bodyReadTimeout = time.Minute
)

// HTTPFront serves MCP clients over HTTP. Make it with NewHTTPFront; it is an
// http.Handler for every path (MCP, the legacy SSE endpoints, /healthz,
// /readyz, /metrics).
type HTTPFront struct {
	g    *Gateway
	cfg  config.HTTP
	mux  *http.ServeMux
	addr string // the listen address, for the default allowed hosts

	bodyTimeout  time.Duration // bounds reading one request body: bodyReadTimeout
	writeTimeout time.Duration // bounds each write to a client: clientWriteTimeout

	// sessionsCtx is every session's Serve context: Close cancels it, and
	// each session then gets the shutdown grace for its requests in flight.
	sessionsCtx context.Context
	endSessions context.CancelFunc

	mu       sync.Mutex
	sessions map[string]*httpSession
	closed   bool           // shutting down: no new sessions or requests
	serving  sync.WaitGroup // each session's Serve goroutine
	stop     chan struct{}  // closed by Close: ends the janitor
	janitor  sync.WaitGroup
}

// httpSession is one client's session over HTTP.
type httpSession struct {
	id       string
	stream   *httpStream
	protocol string

	mu       sync.Mutex
	lastUsed time.Time
	active   int // requests and streams open now
}

// NewHTTPFront builds the HTTP front for g. listenAddr is where it will be
// served (for the default allowed Host values).
func NewHTTPFront(g *Gateway, cfg config.HTTP, listenAddr string) *HTTPFront {
	if cfg.Path == "" {
		cfg.Path = "/mcp"
	}
	if cfg.SessionIdle <= 0 {
		cfg.SessionIdle = config.DefaultSessionIdle
	}
	if cfg.MaxSessions <= 0 {
		cfg.MaxSessions = config.DefaultMaxSessions
	}
	f := &HTTPFront{g: g, cfg: cfg, addr: listenAddr, bodyTimeout: bodyReadTimeout, writeTimeout: clientWriteTimeout, sessions: map[string]*httpSession{}, stop: make(chan struct{})}
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
	f.janitor.Add(1)
	go f.expireIdle()
	return f
}

func (f *HTTPFront) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rc := http.NewResponseController(w)
	// Every answer is written within writeTimeout of the request, or of
	// each message for those that wait or stream (they set their own).
	// This also clears a deadline an earlier request on the connection set.
	rc.SetWriteDeadline(time.Now().Add(f.writeTimeout))
	if r.ContentLength != 0 {
		// A body that stalls must not hold the connection, whichever
		// handler runs: net/http reads what a handler left of it before
		// answering. readBody lifts the deadline once the body is in,
		// so that an answer streamed later is not cut. (http.Server's
		// ReadTimeout cannot do this: it would stay on through the stream.)
		rc.SetReadDeadline(time.Now().Add(f.bodyTimeout))
	}
	f.mux.ServeHTTP(w, r)
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
func (f *HTTPFront) Close() {
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
func (f *HTTPFront) closing() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.closed
}

// errShuttingDown answers a request that comes once Close has begun.
var errShuttingDown = jsonrpc.Errorf(jsonrpc.ErrInternal, "mcpgate is shutting down: it takes no new requests")

// guard checks what every MCP request must pass: the Host (DNS
// rebinding), the Origin, and the bearer token.
func (f *HTTPFront) guard(next http.Handler) http.Handler {
	return f.checkOrigin(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if len(f.cfg.Tokens) > 0 && !f.tokenValid(r.Header.Get("Authorization")) {
			w.Header().Set("WWW-Authenticate", `Bearer realm="mcpgate"`)
			http.Error(w, "a valid bearer token is required", http.StatusUnauthorized)
			return
		}
		next.ServeHTTP(w, r)
	}))
}

// checkOrigin checks the Host (DNS rebinding) and the Origin: what every
// request must pass, with a token or without.
func (f *HTTPFront) checkOrigin(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !f.hostAllowed(r.Host) {
			http.Error(w, fmt.Sprintf("Host %q is not allowed (see allowed_hosts)", r.Host), http.StatusForbidden)
			return
		}
		if o := r.Header.Get("Origin"); o != "" && !f.originAllowed(o) {
			http.Error(w, fmt.Sprintf("Origin %q is not allowed (see allowed_origins)", o), http.StatusForbidden)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// tokenValid checks an Authorization header. The scheme is
// case-insensitive (RFC 9110, section 11.1): "bearer" is "Bearer".
func (f *HTTPFront) tokenValid(header string) bool {
	scheme, token, ok := strings.Cut(header, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return false
	}
	token = strings.TrimLeft(token, " ")
	valid := 0
	for _, t := range f.cfg.Tokens {
		valid |= subtle.ConstantTimeCompare([]byte(token), []byte(t))
	}
	return valid == 1
}

// isLoopbackHost reports whether host names this machine. Host names are
// case-insensitive (RFC 4343): LOCALHOST is localhost.
func isLoopbackHost(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(strings.Trim(host, "[]"))
	return ip != nil && ip.IsLoopback()
}

func splitHost(hostport string) string {
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		return h
	}
	return hostport
}

func (f *HTTPFront) hostAllowed(host string) bool {
	if f.cfg.AllowedHosts == nil {
		h := splitHost(host)
		return isLoopbackHost(h) || strings.EqualFold(h, splitHost(f.addr)) && h != ""
	}
	for _, a := range f.cfg.AllowedHosts {
		if strings.EqualFold(a, host) || strings.EqualFold(a, splitHost(host)) {
			return true
		}
	}
	return false
}

func (f *HTTPFront) originAllowed(origin string) bool {
	if f.cfg.AllowedOrigins == nil {
		u, err := url.Parse(origin)
		return err == nil && isLoopbackHost(u.Hostname())
	}
	for _, a := range f.cfg.AllowedOrigins {
		if strings.EqualFold(strings.TrimSuffix(a, "/"), origin) {
			return true
		}
	}
	return false
}

// serveReady reports which upstreams are connected, without reasons: those
// can hold paths and other details that an unauthenticated caller need not see.
func (f *HTTPFront) serveReady(w http.ResponseWriter, r *http.Request) {
	type server struct {
		Name      string `json:"name"`
		Connected bool   `json:"connected"`
	}
	var out struct {
		Ready   bool     `json:"ready"`
		Audit   string   `json:"audit,omitempty"` // "ok" or "failing"; absent without an audit trail
		Servers []server `json:"servers"`
	}
	out.Audit = f.g.audit.state()
	for _, u := range f.g.upstreams {
		c := u.connected()
		out.Ready = out.Ready || c || u.isolatedBase() // isolated: started per session, on demand
		out.Servers = append(out.Servers, server{u.name, c})
	}
	if f.closing() {
		out.Ready = false // draining: send new clients elsewhere
	}
	w.Header().Set("Content-Type", "application/json")
	if !out.Ready {
		w.WriteHeader(http.StatusServiceUnavailable)
	}
	json.NewEncoder(w).Encode(out)
}

func (f *HTTPFront) serveMCP(w http.ResponseWriter, r *http.Request) {
	switch r.Method {
	case http.MethodPost:
		f.servePost(w, r)
	case http.MethodGet:
		f.serveGet(w, r)
	case http.MethodDelete:
		f.serveDelete(w, r)
	default:
		w.Header().Set("Allow", "GET, POST, DELETE")
		http.Error(w, "use POST, GET or DELETE", http.StatusMethodNotAllowed)
	}
}

// jsonError answers an HTTP request with a JSON-RPC error body.
func jsonError(w http.ResponseWriter, status int, id jsonrpc.ID, err error) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write((&jsonrpc.Message{ID: id, Error: jsonrpc.ToWire(err)}).Encode())
}

// readBody reads a request body up to the message limit.
func (f *HTTPFront) readBody(w http.ResponseWriter, r *http.Request) ([]byte, bool) {
	limit := f.g.cfg.MaxMessage
	if limit <= 0 {
		limit = jsonrpc.DefaultMaxMessage
	}
	// The read deadline (set in ServeHTTP) stays on unless the whole body
	// came in: what is left of a body that stalled or is too large must
	// not hold the connection while net/http reads it.
	body, err := io.ReadAll(io.LimitReader(r.Body, int64(limit)+1))
	if err != nil {
		w.Header().Set("Connection", "close") // the rest of the body is still on the wire
		http.Error(w, "reading the body: "+err.Error(), http.StatusBadRequest)
		return nil, false
	}
	if len(body) > limit {
		prefix := body[:min(len(body), 64<<10)]
		id := jsonrpc.ID{}
		if ms, _ := rawjson.Members(prefix); ms != nil {
			if raw, ok := ms.Get("id"); ok {
				id, _ = jsonrpc.ParseID(raw)
			}
		}
		jsonError(w, http.StatusRequestEntityTooLarge, id, jsonrpc.Errorf(jsonrpc.ErrInvalidRequest, "message exceeds the limit of %d bytes", limit))
		return nil, false
	}
	http.NewResponseController(w).SetReadDeadline(time.Time{})
	return body, true
}

func (f *HTTPFront) servePost(w http.ResponseWriter, r *http.Request) {
	body, ok := f.readBody(w, r)
	if !ok {
		return
	}
	msg, err := jsonrpc.Decode(body)
	batch := len(body) > 0 && strings.HasPrefix(strings.TrimSpace(string(body[:min(len(body), 16)])), "[")
	if err != nil && !batch {
		id := jsonrpc.ID{}
		if msg != nil {
			id = msg.ID
		}
		jsonError(w, http.StatusBadRequest, id, err)
		return
	}
	hs, created, status, err := f.sessionFor(r, msg)
	if err != nil {
		http.Error(w, err.Error(), status)
		return
	}
	hs.use(1)
	defer hs.use(-1)
	w.Header().Set(headerSession, hs.id)
	if (batch || msg.IsRequest()) && !created && f.closing() {
		// Notifications and responses still go in: a request in flight may
		// wait for the client's answer, or the client may cancel it.
		id := jsonrpc.ID{}
		if !batch {
			id = msg.ID
		}
		jsonError(w, http.StatusServiceUnavailable, id, errShuttingDown)
		return
	}
	if batch || !msg.IsRequest() {
		if batch && hs.protocol != version20250326 {
			jsonError(w, http.StatusBadRequest, jsonrpc.ID{}, jsonrpc.Errorf(jsonrpc.ErrInvalidRequest, "batches are not supported in this protocol version"))
			return
		}
		if batch {
			f.serveBatch(w, r, hs, body)
			return
		}
		hs.stream.deliver(body)
		w.WriteHeader(http.StatusAccepted)
		return
	}
	sseOK := strings.Contains(r.Header.Get("Accept"), "text/event-stream")
	post, err := hs.stream.openPost(msg.ID, sseOK)
	if err != nil {
		jsonError(w, http.StatusBadRequest, msg.ID, err)
		return
	}
	defer hs.stream.closePost(msg.ID, post)
	hs.stream.deliver(body)
	final := post.respond(w, r)
	if created && !isSuccess(final) {
		// The client has no session to use, and an unused one would count
		// against max_sessions until it expired.
		f.drop(hs)
	}
}

// isSuccess reports whether msg is a response with a result.
func isSuccess(msg []byte) bool {
	m, err := jsonrpc.Decode(msg)
	return err == nil && m.Error == nil && m.Result != nil
}

// serveBatch passes a batch (protocol 2025-03-26) to the session. One with
// requests waits for the array of their answers; one batch at a time.
func (f *HTTPFront) serveBatch(w http.ResponseWriter, r *http.Request, hs *httpSession, body []byte) {
	var elems []struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	json.Unmarshal(body, &elems)
	requests := false
	for _, e := range elems {
		requests = requests || (e.Method != "" && len(e.ID) > 0)
	}
	if !requests {
		hs.stream.deliver(body)
		w.WriteHeader(http.StatusAccepted)
		return
	}
	p := &postWaiter{st: hs.stream, ch: make(chan postMsg, 1), gone: make(chan struct{})}
	hs.stream.mu.Lock()
	if hs.stream.batch != nil {
		hs.stream.mu.Unlock()
		jsonError(w, http.StatusConflict, jsonrpc.ID{}, jsonrpc.Errorf(jsonrpc.ErrInvalidRequest, "another batch is in flight on this session"))
		return
	}
	hs.stream.batch = p
	hs.stream.mu.Unlock()
	defer func() {
		hs.stream.mu.Lock()
		hs.stream.batch = nil
		hs.stream.mu.Unlock()
		close(p.gone)
	}()
	hs.stream.deliver(body)
	p.respond(w, r)
}

// sessionFor finds the session a POST belongs to, or makes one for an
// initialize (created). It checks MCP-Protocol-Version on every later request.
func (f *HTTPFront) sessionFor(r *http.Request, msg *jsonrpc.Message) (hs *httpSession, created bool, status int, err error) {
	id := r.Header.Get(headerSession)
	if id == "" {
		if msg != nil && msg.Method == methodInitialize {
			hs, err := f.newSession(false)
			if err != nil {
				return nil, false, http.StatusServiceUnavailable, err
			}
			var p struct {
				ProtocolVersion string `json:"protocolVersion"`
			}
			json.Unmarshal(msg.Params, &p)
			hs.protocol = p.ProtocolVersion
			if !SupportsVersion(hs.protocol) {
				hs.protocol = latestVersion
			}
			return hs, true, 0, nil
		}
		return nil, false, http.StatusBadRequest, fmt.Errorf("missing %s header: send initialize first, then the session id it returned", headerSession)
	}
	hs, status, err = f.lookup(r)
	return hs, false, status, err
}

// newSession starts a session whose stream is fed by HTTP requests.
func (f *HTTPFront) newSession(legacy bool) (*httpSession, error) {
	id := newSessionID()
	hs := &httpSession{id: id, stream: newHTTPStream(id, legacy, f.g.log, f.writeTimeout), lastUsed: time.Now()}
	f.mu.Lock()
	if f.closed {
		f.mu.Unlock()
		return nil, errors.New("mcpgate is shutting down: it takes no new sessions")
	}
	if len(f.sessions) >= f.cfg.MaxSessions {
		f.mu.Unlock()
		f.g.log.Warn("HTTP session refused: too many open", "max_sessions", f.cfg.MaxSessions)
		return nil, fmt.Errorf("too many sessions open (max_sessions is %d); try again later", f.cfg.MaxSessions)
	}
	f.sessions[hs.id] = hs
	f.serving.Add(1)
	f.mu.Unlock()
	go func() {
		defer f.serving.Done()
		f.g.Serve(f.sessionsCtx, hs.stream, ServeOptions{SessionID: hs.id, Ended: hs.stream.deleted.Load})
		f.mu.Lock()
		delete(f.sessions, hs.id)
		f.mu.Unlock()
	}()
	return hs, nil
}

func (hs *httpSession) use(delta int) {
	hs.mu.Lock()
	hs.active += delta
	hs.lastUsed = time.Now()
	hs.mu.Unlock()
}

func (hs *httpSession) idleSince() (time.Time, bool) {
	hs.mu.Lock()
	defer hs.mu.Unlock()
	return hs.lastUsed, hs.active == 0
}

// expireIdle ends sessions unused for session_idle: clients often never
// send DELETE (the TypeScript SDK's close() does not).
func (f *HTTPFront) expireIdle() {
	defer f.janitor.Done()
	tick := time.NewTicker(min(f.cfg.SessionIdle/4+time.Millisecond, time.Minute))
	defer tick.Stop()
	for {
		select {
		case <-f.stop:
			return
		case <-tick.C:
		}
		f.mu.Lock()
		var expired []*httpSession
		for id, hs := range f.sessions {
			if last, idle := hs.idleSince(); idle && time.Since(last) > f.cfg.SessionIdle {
				expired = append(expired, hs)
				delete(f.sessions, id)
			}
		}
		f.mu.Unlock()
		for _, hs := range expired {
			f.g.log.Info("HTTP session expired", "session", hs.id, "idle", f.cfg.SessionIdle)
			hs.stream.end()
		}
	}
}

// lookup finds the session a request names, and checks the protocol
// version it says it speaks.
func (f *HTTPFront) lookup(r *http.Request) (*httpSession, int, error) {
	id := r.Header.Get(headerSession)
	if id == "" {
		return nil, http.StatusBadRequest, fmt.Errorf("missing %s header", headerSession)
	}
	f.mu.Lock()
	hs := f.sessions[id]
	f.mu.Unlock()
	if hs == nil || hs.stream.legacy {
		return nil, http.StatusNotFound, errors.New("unknown or expired session: initialize a new one")
	}
	if v := r.Header.Get(headerProtocol); v != "" && !SupportsVersion(v) {
		return nil, http.StatusBadRequest, fmt.Errorf("unsupported %s %q (mcpgate speaks %v)", headerProtocol, v, supportedVersions)
	}
	return hs, 0, nil
}

// serveGet opens the session's stream for messages not tied to a request.
func (f *HTTPFront) serveGet(w http.ResponseWriter, r *http.Request) {
	if !strings.Contains(r.Header.Get("Accept"), "text/event-stream") {
		http.Error(w, "GET opens an event stream: send Accept: text/event-stream", http.StatusNotAcceptable)
		return
	}
	hs, status, err := f.lookup(r)
	if err != nil {
		http.Error(w, err.Error(), status)
		return
	}
	hs.use(1)
	defer hs.use(-1)
	hs.stream.serveStandalone(w, r, nil)
}

func (f *HTTPFront) serveDelete(w http.ResponseWriter, r *http.Request) {
	hs, status, err := f.lookup(r)
	if err != nil {
		http.Error(w, err.Error(), status)
		return
	}
	f.drop(hs)
	w.WriteHeader(http.StatusNoContent)
}

// drop ends a session at once: nobody waits for the answers to its
// requests in flight.
func (f *HTTPFront) drop(hs *httpSession) {
	f.mu.Lock()
	delete(f.sessions, hs.id)
	f.mu.Unlock()
	hs.stream.deleted.Store(true)
	hs.stream.end()
}

// The legacy HTTP+SSE transport (2024-11-05): GET /sse opens the stream and
// announces where to POST; every message to the client, answers included,
// goes on that stream.

func (f *HTTPFront) serveLegacyStream(w http.ResponseWriter, r *http.Request) {
	hs, err := f.newSession(true)
	if err != nil {
		http.Error(w, err.Error(), http.StatusServiceUnavailable)
		return
	}
	hs.use(1)
	defer func() {
		hs.use(-1)
		f.mu.Lock()
		delete(f.sessions, hs.id)
		f.mu.Unlock()
		hs.stream.end() // the stream is the session: when it goes, so does the session
	}()
	endpoint := "/messages?sessionId=" + hs.id
	hs.stream.serveStandalone(w, r, func(w io.Writer) error {
		_, err := fmt.Fprintf(w, "event: endpoint\ndata: %s\n\n", endpoint)
		return err
	})
}

func (f *HTTPFront) serveLegacyPost(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	hs := f.sessions[r.URL.Query().Get("sessionId")]
	f.mu.Unlock()
	if hs == nil || !hs.stream.legacy {
		http.Error(w, "unknown session: open GET /sse first", http.StatusNotFound)
		return
	}
	body, ok := f.readBody(w, r)
	if !ok {
		return
	}
	if f.closing() {
		if m, err := jsonrpc.Decode(body); err == nil && m.IsRequest() {
			jsonError(w, http.StatusServiceUnavailable, m.ID, errShuttingDown)
			return
		}
	}
	hs.use(1)
	defer hs.use(-1)
	hs.stream.deliver(body)
	w.WriteHeader(http.StatusAccepted)
	io.WriteString(w, "Accepted")
}
