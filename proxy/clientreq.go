package proxy

import (
	"context"
	"encoding/json"
	"slices"
	"time"

	"github.com/mcpgate/mcpgate/jsonrpc"
)

// Requests from servers to the client (sampling, elicitation, roots) go to
// the client session whose request caused them (DESIGN D7: never a guessed
// one). Over HTTP the server names the request (it sends its own on the
// answer stream of ours). Over stdio nothing on the wire does: when only
// one session has requests in flight to the server, it is that session's
// (its most recent request stands for it); when several do, mcpgate cannot
// tell, and refuses. A call a client gave up on a moment ago counts as in
// flight: the server may still ask about it (see givenup.go). A server run
// once per session ("isolation": "session") never has that problem.

type ctxRequestKey struct{}

// clientRequest is the client request a context serves.
type clientRequest struct {
	s   *session
	id  jsonrpc.ID
	env *envelope        // a modern request's envelope; nil for a legacy request
	x   *exchange        // a modern request's call to a legacy server: where its requests for input go
	msg *jsonrpc.Message // the request as decoded; nil when not at hand
}

// withRequest marks ctx as serving request id from s.
func withRequest(ctx context.Context, s *session, id jsonrpc.ID, env *envelope) context.Context {
	return context.WithValue(ctx, ctxRequestKey{}, &clientRequest{s: s, id: id, env: env})
}

// requestContext is the context a client's request is served under: the
// request (ctxRequestKey), whose params, split when it was decoded, are
// then read without splitting them again (see paramMembers), and its hold
// on the server set it began under (ctxHeldSetKey), in one allocation
// where values and a sync.OnceFunc took six on every request.
type requestContext struct {
	context.Context
	req  clientRequest
	hold setHold
}

// serving is ctx serving the request msg from s, holding the live server
// set until hold.release.
func (s *session) serving(ctx context.Context, msg *jsonrpc.Message) *requestContext {
	rc := new(requestContext)
	s.servingIn(rc, ctx, msg)
	return rc
}

// servingIn is serving in rc, which a caller holds in one allocation of its
// own.
func (s *session) servingIn(rc *requestContext, ctx context.Context, msg *jsonrpc.Message) {
	*rc = requestContext{Context: ctx, req: clientRequest{s: s, id: msg.ID, msg: msg}}
	rc.hold.set = s.g.holdLive()
}

// AfterFunc lets the contexts derived from the request's follow it through
// the connection's handler context (see jsonrpc), not on a goroutine
// each, as the context package does for a context it does not know.
func (rc *requestContext) AfterFunc(f func()) (stop func() bool) {
	if a, ok := rc.Context.(interface{ AfterFunc(func()) func() bool }); ok {
		return a.AfterFunc(f)
	}
	return context.AfterFunc(rc.Context, f)
}

func (rc *requestContext) Value(key any) any {
	switch key {
	case ctxRequestKey{}:
		return &rc.req
	case ctxHeldSetKey{}:
		return &rc.hold
	}
	return rc.Context.Value(key)
}

// envelopeOf is the envelope of the modern request ctx serves; nil for a
// legacy request.
func envelopeOf(ctx context.Context) *envelope {
	r, _ := requestFrom(ctx)
	return r.env
}

func requestFrom(ctx context.Context) (clientRequest, bool) {
	if r, ok := ctx.Value(ctxRequestKey{}).(*clientRequest); ok {
		return *r, true
	}
	return clientRequest{}, false
}

// caller is one client request in flight to an upstream.
type caller struct {
	clientRequest
	up   *upstream
	dl   *deadline // the request's deadline: held while the server waits for the client
	seq  uint64
	at   int        // its index in upstream.callers while it is there. Guarded by upstream.mu.
	upID jsonrpc.ID // the id it went upstream with; set once sent. Guarded by upstream.mu.
	// named: causeOf gave it as a server request's cause, which may use
	// it after it is done. Guarded by upstream.mu.
	named bool
}

// addCaller records that a client request is in flight here. Its sent
// tells it the id the request went upstream with; its done removes it.
func (u *upstream) addCaller(r clientRequest, dl *deadline) *caller {
	var c *caller
	if dl != nil {
		c = &dl.caller // the request's: one allocation for both
	} else {
		c = new(caller)
	}
	*c = caller{clientRequest: r, up: u, dl: dl, seq: u.g.callerSeq.Add(1)}
	u.mu.Lock()
	c.at = len(u.callers)
	u.callers = append(u.callers, c)
	u.mu.Unlock()
	return c
}

func (c *caller) sent(id jsonrpc.ID) {
	c.up.mu.Lock()
	c.upID = id
	c.up.mu.Unlock()
}

// done takes c out of its upstream's callers. named is whether a server
// request took c as its cause (see causeOf):
// final once done, since causeOf finds only callers not done, so a caller
// that must know need not take u.mu again (see recycleAnswered).
func (c *caller) done() (named bool) {
	u := c.up
	u.mu.Lock()
	defer u.mu.Unlock()
	named = c.named
	// Its place is known, and the last caller takes it: with C calls in
	// flight, a search and a shift of the rest made each answer cost O(C)
	// under the upstream's lock. Nothing reads callers in order (causeOf
	// goes by seq).
	i := c.at
	if i >= len(u.callers) || u.callers[i] != c {
		return named // done already
	}
	last := len(u.callers) - 1
	u.callers[i] = u.callers[last]
	u.callers[i].at = i
	u.callers[last] = nil
	u.callers = u.callers[:last]
	return named
}

// modernCallers are the modern requests in flight to u, once each.
func (u *upstream) modernCallers() []clientRequest {
	u.mu.Lock()
	defer u.mu.Unlock()
	var out []clientRequest
	for _, c := range u.callers {
		if c.env != nil && !slices.ContainsFunc(out, func(r clientRequest) bool { return r.s == c.s && r.id == c.id }) {
			out = append(out, c.clientRequest)
		}
	}
	return out
}

// cause is what the gateway knows about the client request behind a
// server's request.
type cause struct {
	r  clientRequest
	dl *deadline // r's call's deadline
	ok bool      // r is the request
	// named: the transport named a request of ours whose caller is gone
	// (it was answered or given up meanwhile): no other may stand for it.
	named bool
	// sessions counts the sessions with requests in flight or given up a
	// moment ago, when they are several and nothing names one (ambiguous).
	sessions int
	// givenUpBy: nothing is in flight, but this session gave a call up a
	// moment ago (sessionGone: a session ended since); the request may be
	// about it, so no other session may stand in for the server's client.
	givenUpBy *session
}

// causeOf finds the client request a server's request belongs to: the one
// the server names, when its transport says (an HTTP server sends it on the
// answer stream of our request); else, when every request in flight to the
// server comes from one session, that session's most recent one. It runs
// when the server's request arrives, on the upstream's reader (see
// arrived): the call it came with may be answered right after.
func (u *upstream) causeOf(serverReq jsonrpc.ID) cause {
	var related jsonrpc.ID
	if l := u.currentLink(); l != nil {
		related, _ = l.relatedTo(serverReq)
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	var best *caller
	distinct := map[*session]bool{}
	for _, c := range u.callers {
		if related.IsValid() && c.upID == related {
			c.named = true
			return cause{r: c.clientRequest, dl: c.dl, ok: true}
		}
		distinct[c.s] = true
		if best == nil || c.seq > best.seq {
			best = c
		}
	}
	ended := 0
	if !related.IsValid() && u.wire != nil {
		ended = u.wire.givenUp.sessionsInto(time.Now(), distinct)
	}
	switch {
	case related.IsValid():
		return cause{named: true}
	case len(distinct)+ended > 1:
		return cause{sessions: len(distinct) + ended}
	case best == nil:
		if ended > 0 {
			return cause{givenUpBy: sessionGone}
		}
		for s := range distinct {
			return cause{givenUpBy: s}
		}
		return cause{}
	}
	best.named = true
	return cause{r: best.clientRequest, dl: best.dl, ok: true}
}

type ctxCauseKey struct{}

// arrived is the upstream connection's Received hook: a request to the
// client side gets its cause found now, in arrival order, and carried to
// its handler in the context.
func (u *upstream) arrived(ctx context.Context, msg *jsonrpc.Message) context.Context {
	if serverMethods[msg.Method].capability == "" {
		return ctx
	}
	return context.WithValue(ctx, ctxCauseKey{}, u.causeOf(msg.ID))
}

// serveClientRequest answers a server's request to the client side: by the
// session that caused it; else by the only session there is, once it has
// initialized; else, for roots/list, from the server's configured roots.
// Never by silence, never by an invented answer.
func (u *upstream) serveClientRequest(ctx context.Context, msg *jsonrpc.Message) (json.RawMessage, error) {
	c, found := ctx.Value(ctxCauseKey{}).(cause)
	if !found {
		c = u.causeOf(msg.ID)
	}
	s, ok, ambiguous := c.r.s, c.ok, c.sessions
	if c.dl != nil {
		// The server waits for the client (a person answering, perhaps):
		// that is not the server taking long.
		c.dl.hold()
		defer c.dl.release()
	}
	switch {
	case c.named:
		u.log.Warn("refused a server request: the client request it came with has ended", "method", msg.Method)
		return nil, jsonrpc.Errorf(jsonrpc.ErrInternal, "mcpgate cannot pass %s to a client: the request of ours it came with has already ended, and no other client is guessed", msg.Method)
	case ambiguous > 1:
		return u.refuseAmbiguous(msg, ambiguous)
	case ok && c.r.env != nil:
		return u.askModernClient(ctx, c.r, msg)
	case !ok && u.owner != nil:
		s = u.owner // an isolated instance serves one session only
	case !ok:
		s = u.g.onlySession(ctx)
	}
	if c.givenUpBy != nil && s != nil && s != c.givenUpBy {
		// The one session there is did not give the call up: the request
		// may be about the other's.
		return u.refuseAmbiguous(msg, 2)
	}
	// roots/list that no client can answer is answered from the config: the
	// operator said what this server may see.
	if msg.Method == methodRootsList && (s == nil || !s.declares("roots")) && u.cfg.Roots != nil {
		return mustJSON(map[string]any{"roots": u.cfg.Roots}), nil
	}
	if s == nil {
		if msg.Method == methodRootsList {
			return json.RawMessage(`{"roots":[]}`), nil
		}
		return nil, jsonrpc.Errorf(jsonrpc.ErrInternal, "mcpgate cannot pass %s to a client: no client request to %q is in flight, and there is not exactly one client session", msg.Method, u.name)
	}
	if err := s.supports(msg.Method, msg.Params); err != nil {
		return nil, err
	}
	if msg.Method == methodElicitationCreate {
		u.g.trackElicitation(u, msg.Params, s)
	}
	return s.callClient(ctx, c.r.id, msg.Method, msg.Params)
}

// refuseAmbiguous answers a server request that could be that of any of
// sessions client sessions: not to a guessed one.
func (u *upstream) refuseAmbiguous(msg *jsonrpc.Message, sessions int) (json.RawMessage, error) {
	u.log.Warn("refused a server request: requests from several client sessions are in flight to the server (or were given up by their client moments ago) and its transport does not say which one it belongs to; run it once per session with \"isolation\": \"session\"", "method", msg.Method, "sessions", sessions)
	if msg.Method == methodRootsList && u.cfg.Roots != nil {
		return mustJSON(map[string]any{"roots": u.cfg.Roots}), nil
	}
	return nil, jsonrpc.Errorf(jsonrpc.ErrInternal, "mcpgate cannot pass %s to a client: requests from %d client sessions are in flight to %q or were given up by their client moments ago, and nothing says which one this belongs to, so no client is guessed (the operator can set \"isolation\": \"session\" for this server)", msg.Method, sessions, u.name)
}

// askModernClient passes a server's request to the modern client whose
// request caused it: through the exchange of its call (see bridgeask.go).
func (u *upstream) askModernClient(ctx context.Context, r clientRequest, msg *jsonrpc.Message) (json.RawMessage, error) {
	if msg.Method == methodRootsList && !r.env.declares("roots") && u.cfg.Roots != nil {
		return mustJSON(map[string]any{"roots": u.cfg.Roots}), nil
	}
	if err := supportsCaps(r.env.caps, msg.Method, msg.Params); err != nil {
		return nil, err
	}
	if r.x == nil {
		return nil, jsonrpc.Errorf(jsonrpc.ErrInternal, "mcpgate cannot pass %s to the client: its request is of protocol %s, which takes input only for tools/call, prompts/get and resources/read", msg.Method, versionModern)
	}
	return r.x.ask(ctx, msg.Method, msg.Params)
}

// onlySession returns the one session, waiting (bounded) for it to finish
// initialize; nil when there are none or several.
func (g *Gateway) onlySession(ctx context.Context) *session {
	g.mu.Lock()
	var only *session
	for s := range g.sessions {
		if only != nil {
			g.mu.Unlock()
			return nil
		}
		only = s
	}
	g.mu.Unlock()
	if only == nil {
		return nil
	}
	select {
	case <-only.ready:
		return only
	case <-ctx.Done():
	case <-time.After(g.startupWait):
	}
	return nil
}

// supports checks that the client declared the capability a server request
// needs: an upstream must get an error at once, not a client's confusion.
func (s *session) supports(method string, params json.RawMessage) error {
	s.mu.Lock()
	caps := s.clientCaps
	s.mu.Unlock()
	return supportsCaps(caps, method, params)
}

// supportsCaps checks a server request against the client capabilities
// caps (a session's, or a modern request's).
func supportsCaps(caps map[string]json.RawMessage, method string, params json.RawMessage) error {
	need := serverMethods[method].capability
	raw, ok := caps[need]
	if !ok {
		return jsonrpc.Errorf(jsonrpc.ErrMethodNotFound, "the client did not declare the %q capability, so it cannot answer %s", need, method)
	}
	if method == methodElicitationCreate {
		var p struct {
			Mode string `json:"mode"`
		}
		json.Unmarshal(params, &p)
		if p.Mode == "" {
			p.Mode = "form"
		}
		var modes map[string]json.RawMessage
		json.Unmarshal(raw, &modes)
		// An empty elicitation capability means form mode (2025-06-18).
		if _, ok := modes[p.Mode]; !ok && !(p.Mode == "form" && len(modes) == 0) {
			return jsonrpc.Errorf(jsonrpc.ErrInvalidParams, "the client does not support %s-mode elicitation", p.Mode)
		}
	}
	return nil
}

// callClient sends a request to the client and waits. If ctx ends first (the
// server cancelled, or mcpgate is stopping), the client is told with
// notifications/cancelled under the id it knows.
func (s *session) callClient(ctx context.Context, related jsonrpc.ID, method string, params json.RawMessage) (json.RawMessage, error) {
	call, err := s.conn.Go(jsonrpc.RelatedTo(ctx, related), method, params)
	if err != nil {
		return nil, jsonrpc.Errorf(jsonrpc.ErrInternal, "the client session is gone: %v", err)
	}
	res, err := call.Wait(ctx)
	if ctx.Err() != nil {
		cancel := mustJSON(map[string]any{"requestId": call.ID(), "reason": "cancelled by the server"})
		s.notifyRelated(notifyCancelled, cancel, related) // never waits
	}
	return res, err
}

// Elicitation ids (url mode) remember their session, so the server's
// notifications/elicitation/complete reaches the client that was asked. An
// id is the server's own: it is kept with the server, so that one server
// cannot complete (or forget) another's. At most maxElicitations are kept;
// past that the oldest is forgotten (its completion notice is then
// dropped, logged), so a server asking without end cannot grow them.

type elicitationKey struct {
	up *upstream
	id string
}

type elicitation struct {
	s   *session
	seq uint64
}

const maxElicitations = 4096

func (g *Gateway) trackElicitation(u *upstream, params json.RawMessage, s *session) {
	var p struct {
		ElicitationID string `json:"elicitationId"`
	}
	if json.Unmarshal(params, &p) != nil || p.ElicitationID == "" {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if _, live := g.sessions[s]; !live {
		// Ended: its dropElicitations ran, or finds this gone. Kept, it
		// would hold the session until maxElicitations pushed it out.
		return
	}
	g.elicitations.add(elicitationKey{u, p.ElicitationID}, s)
}

func (g *Gateway) relayElicitationComplete(u *upstream, params json.RawMessage) {
	var p struct {
		ElicitationID string `json:"elicitationId"`
	}
	json.Unmarshal(params, &p)
	key := elicitationKey{u, p.ElicitationID}
	g.mu.Lock()
	s := g.elicitations.take(key)
	g.mu.Unlock()
	if s == nil {
		u.log.Warn("dropped notifications/elicitation/complete for an unknown elicitation", "elicitationId", p.ElicitationID)
		return
	}
	s.notify(notifyElicitationComplete, params)
}

// rootsChanged tells every connected upstream that the client's roots may
// have changed, so that it asks again. It never waits: the caller is a
// client's reader, which a server not reading its stdin must not hold up.
// While one such notice waits for a server, more would say nothing new, so
// a flood of them costs one message per server.
func (g *Gateway) rootsChanged() {
	msg := (&jsonrpc.Message{Method: notifyRootsChanged}).Encode()
	for _, u := range g.live().upstreams {
		if w, err := u.connectionNoWait(); err == nil {
			w.out.offerOnce(msg)
		}
	}
}
