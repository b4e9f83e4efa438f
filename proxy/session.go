package proxy

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpgate/mcpgate/jsonrpc"
)

// session is one connected client.
type session struct {
	g         *Gateway
	id        string
	conn      *jsonrpc.Conn
	out       *outbox     // the way out to the client; conn writes through it
	closing   atomic.Bool // set when Serve is done: notifications stop
	abandoned atomic.Bool // set when the shutdown grace ran out

	ready chan struct{} // closed when the client sent notifications/initialized

	mu          sync.Mutex
	initialized bool   // initialize was answered
	protocol    string // negotiated protocol version
	clientInfo  implementation
	clientCaps  map[string]json.RawMessage // what the client declared
	logLevel    string                     // set by logging/setLevel; empty: everything
}

func newSession(g *Gateway, stream jsonrpc.Stream) *session {
	id := newSessionID()
	if named, ok := stream.(interface{ sessionID() string }); ok {
		id = named.sessionID() // HTTP: the Mcp-Session-Id, so logs and audit match what clients see
	}
	s := &session{g: g, id: id, ready: make(chan struct{})}
	s.out = newOutbox(stream, sessionQueueBytes, true, 2*time.Second, func(queued int) {
		g.log.Warn("client is not reading: notifications to it are dropped until it catches up", "session", s.id, "queued_bytes", queued)
	})
	s.conn = jsonrpc.NewConn(s.out, jsonrpc.Options{
		Handler: s,
		// initialize keeps its place before the notifications after it.
		Ordered: func(method string) bool { return method == methodInitialize },
		Batches: func() bool {
			s.mu.Lock()
			defer s.mu.Unlock()
			return s.protocol == Version20250326 // the one version with batches
		},
		OnBadInput: func(err error) {
			g.log.Warn("bad message from client", "session", s.id, "err", err)
		},
		AnswerUnreadable: true,
		MaxInFlight:      maxClientRequests,
		MaxInFlightBytes: maxClientRequestBytes,
	})
	s.conn.Start()
	return s
}

func (s *session) protocolVersion() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.protocol
}

func (s *session) declares(capability string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.clientCaps[capability]
	return ok
}

func (s *session) isInitialized() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.initialized
}

// notify sends a notification to the client unless the session is ending.
// It never blocks: a client that does not read loses notifications, not
// the gateway's time (see sendQueue).
func (s *session) notify(method string, params json.RawMessage) {
	s.notifyRelated(method, params, jsonrpc.ID{})
}

// notifyRelated is notify for a notification that belongs to the client's
// request related (progress for it), which HTTP sends on that request's stream.
func (s *session) notifyRelated(method string, params json.RawMessage, related jsonrpc.ID) {
	if s.closing.Load() {
		return
	}
	s.out.offer((&jsonrpc.Message{Method: method, Params: params}).Encode(), related)
}

// Handle serves one message from the client and records it in the audit
// trail.
func (s *session) Handle(ctx context.Context, msg *jsonrpc.Message) (json.RawMessage, error) {
	if msg.IsNotification() {
		s.handleNotification(msg)
		return nil, nil
	}
	start := time.Now()
	rec := &auditRecord{Session: s.id, Method: msg.Method, Server: "mcpgate", ID: json.RawMessage(msg.ID.String()), BytesIn: msg.Size, Params: msg.Params}
	res, err := s.dispatch(withRequest(ctx, s, msg.ID), msg, rec)
	rec.DurationMS = float64(time.Since(start).Microseconds()) / 1000
	if err != nil {
		if s.abandoned.Load() && errors.Is(err, context.Canceled) {
			err = jsonrpc.Errorf(jsonrpc.ErrInternal, "mcpgate is shutting down: %s did not finish within the shutdown grace period (%v)", msg.Method, s.g.shutdownGrace)
		}
		we := redactError(err, s.g.redact) // upstream errors echo URLs, commands, tokens
		err = we
		rec.Outcome, rec.Error = "error", &auditError{Code: we.Code, Message: we.Message}
		rec.BytesOut = jsonrpc.ResponseSize(msg.ID, nil, we)
	} else {
		rec.Outcome, rec.BytesOut, rec.Result = "ok", jsonrpc.ResponseSize(msg.ID, res, nil), res
		if msg.Method == methodToolsCall && s.g.audit != nil {
			rec.ToolError = isToolError(res)
		}
	}
	s.g.metrics.observe(rec)
	s.g.audit.write(rec)
	return res, err
}

func isToolError(result json.RawMessage) bool {
	ms, err := jsonrpc.Members(result)
	if err != nil {
		return false
	}
	v, _ := ms.Get("isError")
	return string(v) == "true"
}

func (s *session) dispatch(ctx context.Context, msg *jsonrpc.Message, rec *auditRecord) (res json.RawMessage, err error) {
	defer s.g.recoverRequest(msg, &err)
	m, ok := methods[msg.Method]
	if !ok {
		return nil, jsonrpc.Errorf(jsonrpc.ErrMethodNotFound, "method not found: %s", msg.Method)
	}
	if !m.beforeInit && !s.isInitialized() {
		return nil, jsonrpc.Errorf(jsonrpc.ErrInvalidRequest, "%s before initialize; send initialize first", msg.Method)
	}
	return m.handle(s, ctx, msg.Params, rec)
}

func (s *session) handleNotification(msg *jsonrpc.Message) {
	var err error
	defer s.g.recoverRequest(msg, &err)
	switch msg.Method {
	case notifyInitialized:
		select {
		case <-s.ready:
			return
		default:
		}
		if !s.isInitialized() {
			return
		}
		close(s.ready)
		// A new client may have roots: servers that cached another answer
		// should ask again.
		if s.declares("roots") {
			s.g.rootsChanged()
		}
	case notifyRootsChanged:
		s.g.rootsChanged()
	case notifyCancelled:
		var p struct {
			RequestID jsonrpc.ID `json:"requestId"`
		}
		if json.Unmarshal(msg.Params, &p) == nil && p.RequestID.IsValid() {
			s.conn.CancelIncoming(p.RequestID) // unknown or finished ids are ignored
		}
	}
}

// initialize answers the client's handshake. The gateway is the server here:
// it does not forward the client's initialize to anyone.
func (s *session) initialize(ctx context.Context, params json.RawMessage) (json.RawMessage, error) {
	var p struct {
		ProtocolVersion string                     `json:"protocolVersion"`
		ClientInfo      implementation             `json:"clientInfo"`
		Capabilities    map[string]json.RawMessage `json:"capabilities"`
	}
	if err := json.Unmarshal(params, &p); err != nil || p.ProtocolVersion == "" {
		return nil, jsonrpc.Errorf(jsonrpc.ErrInvalidParams, "initialize needs params with a protocolVersion")
	}
	version := p.ProtocolVersion
	if !isSupportedVersion(version) {
		version = LatestVersion
	}
	s.mu.Lock()
	if s.initialized {
		s.mu.Unlock()
		return nil, jsonrpc.Errorf(jsonrpc.ErrInvalidRequest, "the session is already initialized")
	}
	s.mu.Unlock()

	// Wait (bounded) for the upstreams' first attempts so their capabilities
	// and instructions can be in the answer.
	select {
	case <-s.g.ready:
	case <-time.After(s.g.startupWait):
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	res := map[string]any{
		"protocolVersion": version,
		"capabilities":    s.g.capabilities(),
		"serverInfo":      map[string]string{"name": "mcpgate", "version": s.g.version},
	}
	if instr := s.g.instructions(); instr != "" {
		res["instructions"] = instr
	}
	s.mu.Lock()
	s.initialized, s.protocol, s.clientInfo, s.clientCaps = true, version, p.ClientInfo, p.Capabilities
	s.mu.Unlock()
	return mustJSON(res), nil
}

// capabilities are the union of what the connected upstreams offer. The
// lists are also offered while any upstream is not connected yet (or failed
// and may come back): capabilities cannot change after initialize, and a
// list that is offered and empty is better than a server whose tools can
// never appear. Every offered list may change as upstreams come and go, so
// listChanged is always true.
func (g *Gateway) capabilities() map[string]any {
	caps := map[string]any{}
	offer := func(name string) {
		switch name {
		case "tools", "prompts", "resources":
			caps[name] = map[string]bool{"listChanged": true}
		case "logging", "completions":
			caps[name] = map[string]any{}
		}
	}
	for _, u := range g.upstreams {
		init, ok := u.knownInit()
		if !ok {
			offer("tools")
			offer("prompts")
			offer("resources")
			continue
		}
		for _, name := range []string{"tools", "prompts", "resources", "logging", "completions"} {
			if _, ok := init.Capabilities[name]; ok {
				offer(name)
			}
		}
		var rc listCapability
		json.Unmarshal(init.Capabilities["resources"], &rc)
		if rc.Subscribe {
			caps["resources"] = map[string]bool{"listChanged": true, "subscribe": true}
		}
	}
	return caps
}

// knownInit is the initialize answer a configured server gave: the live
// one; for an isolated server, the last answer of any of its instances (an
// isolated server not started yet offers what a server not connected yet
// does: the lists).
func (u *upstream) knownInit() (initializeResult, bool) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.isolatedBase() {
		return u.lastInit, u.hadInit
	}
	return u.init, u.state == stateConnected
}

// instructions combine every connected upstream's instructions under its name.
func (g *Gateway) instructions() string {
	var parts []string
	for _, u := range g.upstreams {
		init, connected := u.knownInit()
		instr := strings.TrimSpace(init.Instructions)
		if connected && instr != "" {
			parts = append(parts, fmt.Sprintf("## %s\n%s", u.name, instr))
		}
	}
	return strings.Join(parts, "\n\n")
}

var logLevels = []string{"debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"}

func logRank(level string) int {
	for i, l := range logLevels {
		if l == level {
			return i
		}
	}
	return -1
}

func (s *session) wantsLog(level string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.logLevel == "" || logRank(level) >= logRank(s.logLevel)
}

// offers reports whether the server declared capability (see knownInit).
func (u *upstream) offers(capability string) bool {
	init, ok := u.knownInit()
	if !ok {
		return false
	}
	_, has := init.Capabilities[capability]
	return has
}
