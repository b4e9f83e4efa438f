package proxy

import (
	"context"
	"encoding/json"
	"errors"
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
	stateless bool        // no session: modern requests only, each on its own (ServeOptions.Stateless)
	client    string      // who the client is (ServeOptions.Client)
	graceOver atomic.Bool // set when the shutdown grace ran out: what runs still is cancelled
	deleted   atomic.Bool // the client ended the session (ServeOptions.Ended): nobody waits for answers
	ended     func() bool // ServeOptions.Ended: the transport's word, before the stream ends (see endedByClient)

	checked *ModernRequest // the request whose envelope the transport read (ServeOptions.Checked)

	ready    chan struct{} // closed when the client sent notifications/initialized
	draining chan struct{} // closed when the client left or mcpgate is stopping: listens end

	mu           sync.Mutex
	initializing chan struct{} // while initialize runs: closed when it has been answered
	initRequest  jsonrpc.ID    // the initialize request that runs
	readyPending bool          // notifications/initialized came while initialize ran
	initialized  bool          // initialize was answered
	protocol     string        // negotiated protocol version
	clientInfo   implementation
	clientCaps   map[string]json.RawMessage // what the client declared
	logLevel     string                     // set by logging/setLevel; empty: everything
}

func newSession(g *Gateway, stream jsonrpc.Stream, opts ServeOptions) *session {
	id := opts.SessionID
	switch {
	case id == "" && opts.Stateless:
		id = newStatelessID()
	case id == "":
		id = newSessionID()
	}
	s := &session{g: g, id: id, stateless: opts.Stateless, client: opts.Client, checked: opts.Checked, ended: opts.Ended, ready: make(chan struct{}), draining: make(chan struct{})}
	s.out = newOutbox(stream, sessionQueueBytes, true, 2*time.Second, func(queued int) {
		g.log.Warn("client is not reading: notifications to it are dropped until it catches up", "session", s.id, "queued_bytes", queued)
	})
	s.boundAnswers()
	s.shareOutbox()
	co := jsonrpc.Options{
		Handler: s,
		OnBadInput: func(err error) {
			g.log.Warn("bad message from client", "session", s.id, "err", err)
		},
		Refused:          s.refused,
		AnswerUnreadable: true,
		MaxInFlight:      maxClientRequests,
		MaxInFlightBytes: maxClientRequestBytes,
		Inline:           s.inlineFor(stream),
	}
	if !s.stateless { // a stateless session's one request is modern (checked): never initialize, never a batch
		co.Batches = func() bool {
			s.mu.Lock()
			defer s.mu.Unlock()
			return s.protocol == version20250326 // the one version with batches
		}
		co.Received = s.received
	}
	s.conn = jsonrpc.NewConn(clientStream(s.out, stream), co)
	s.conn.Start()
	return s
}

// versionFor is the protocol version of the request ctx serves: a modern
// request's own, else the session's.
func (s *session) versionFor(ctx context.Context) string {
	if env := envelopeOf(ctx); env != nil {
		return env.version
	}
	return s.protocolVersion()
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
// the gateway's time (see outbox).
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

// Handle serves one message from the client (see clientMethods), and
// records each request in the audit trail.
func (s *session) Handle(ctx context.Context, msg *jsonrpc.Message) (json.RawMessage, error) {
	if msg.IsNotification() {
		var err error
		defer s.g.recoverRequest(msg, &err)
		if m := clientMethods[msg.Method]; m.notice != nil {
			m.notice(s, msg.Params)
		}
		return nil, nil
	}
	start := time.Now()
	rec := s.record(msg)
	res, err := s.dispatch(ctx, msg, &rec)
	return s.conclude(msg, &rec, start, res, err)
}

// record is the audit record of the client's request msg, as it comes.
func (s *session) record(msg *jsonrpc.Message) auditRecord {
	return auditRecord{Session: s.id, Method: msg.Method, Server: "mcpgate", id: msg.ID, BytesIn: msg.Size, Params: msg.Params}
}

// conclude completes rec with the request's outcome, records it (metrics,
// audit trail) and returns the answer as the client gets it.
func (s *session) conclude(msg *jsonrpc.Message, rec *auditRecord, start time.Time, res json.RawMessage, err error) (json.RawMessage, error) {
	rec.DurationMS = float64(time.Since(start).Microseconds()) / 1000
	var denied *denial
	if err != nil {
		var d *denial // on the heap (errors.As), made only for an error
		if errors.As(err, &d) {
			denied, err = d, d.wire()
		}
	}
	var deleted error // the client's answer, when it ended the session first
	if s.endedByClient() && denied == nil && rec.Outcome != "denied" {
		// Whatever the call came to, nobody waits for it: the client gets
		// the DELETE error, whether the server's answer came before or
		// after the session's end failed its requests to the client (see
		// endedByClient). The audit trail and the metrics say what the
		// server did: its answer if one came, the DELETE error for a call
		// cancelled unanswered. A policy's denial is the client's answer
		// and the record's: they count what the policies stopped.
		deleted = s.abandoned(msg.Method)
		if errors.Is(err, context.Canceled) {
			res, err, rec.ToolError = nil, deleted, false
		}
	}
	if err != nil {
		if s.graceOver.Load() && errors.Is(err, context.Canceled) {
			err = s.abandoned(msg.Method)
		}
		we := redactError(err, s.g.redact) // upstream errors echo URLs, commands, tokens
		err = we
		rec.Outcome, rec.Error = "error", &auditError{Code: we.Code, Message: we.Message}
		if denied != nil {
			rec.Outcome = "denied"
		}
		rec.BytesOut = responseSize(msg.ID, nil, we)
	} else {
		rec.BytesOut, rec.Result = responseSize(msg.ID, res, nil), res
		if rec.Outcome == "" {
			rec.Outcome = "ok"
		}
	}
	var sent *jsonrpc.Error
	if deleted != nil {
		// bytes_out counts what the client was sent, as the metrics do.
		sent = redactError(deleted, s.g.redact)
		rec.BytesOut = responseSize(msg.ID, nil, sent)
	}
	later := s.g.recordsAfterAnswer(rec) // decisions that only record, still being made (decidelater.go)
	s.g.metrics.observe(rec)
	if !later {
		s.g.audit.write(rec) // before the answer leaves: with audit.sync "always", on the disk first
	}
	if sent != nil {
		return nil, sent
	}
	return res, err
}

// refused records a request the connection answered itself (a duplicate
// id, one past the bound on requests in flight, over the size limit,
// invalid): a flood the gateway refuses is seen in the audit trail and the
// metrics like any request.
func (s *session) refused(msg *jsonrpc.Message, err *jsonrpc.Error) {
	s.g.recordRefused(s.id, msg, err)
}

func (s *session) dispatch(ctx context.Context, msg *jsonrpc.Message, rec *auditRecord) (res json.RawMessage, err error) {
	defer s.g.recoverRequest(msg, &err)
	// The servers it may be routed to stay until it ends, or until it says
	// it is routed (see Reload, letGoOfServers).
	rc := s.serving(ctx, msg)
	defer rc.hold.release()
	env, err := s.envelopeOf(msg)
	if err != nil {
		return nil, err
	}
	rc.req.env = env
	ctx = rc
	m := clientMethods[msg.Method]
	if env != nil {
		rec.Protocol, rec.Client = env.version, env.client.Name
		return s.dispatchModern(ctx, msg, m, rec)
	}
	switch {
	case m.modernOnly:
		return nil, jsonrpc.Errorf(jsonrpc.ErrMethodNotFound, "method not found: %s without the protocol %s envelope (%q in _meta); a legacy client sends initialize", msg.Method, versionModern, metaProtocolVersion)
	case m.serve == nil:
		return nil, jsonrpc.Errorf(jsonrpc.ErrMethodNotFound, "method not found: %s", msg.Method)
	}
	if !m.beforeInit {
		if err := s.awaitInitialize(ctx, msg.Method); err != nil {
			return nil, err
		}
	}
	return m.serve(s, ctx, msg.Params, rec)
}

// dispatchModern serves a request of the modern era: on its own, whatever
// the session did before (initialized or not), with the client its
// envelope describes.
func (s *session) dispatchModern(ctx context.Context, msg *jsonrpc.Message, m clientMethod, rec *auditRecord) (json.RawMessage, error) {
	if err := modernMethod(msg.Method); err != nil {
		return nil, err
	}
	// No handshake waits for the servers to start: the first requests of a
	// modern client do (bounded), as initialize would.
	if err := s.g.awaitStartup(ctx); err != nil {
		return nil, err
	}
	res, err := m.serve(s, ctx, msg.Params, rec)
	if err != nil {
		return nil, modernError(err)
	}
	if msg.Method == methodResourcesRead && !inputRequired(res) {
		res = withDefaultCacheHint(res)
	}
	return s.completeResult(res, rec)
}

// received marks initialize as under way as soon as it is read, before its
// handler runs, so that a request read after it waits for it.
func (s *session) received(ctx context.Context, msg *jsonrpc.Message) context.Context {
	if msg.Method != methodInitialize {
		return ctx
	}
	s.mu.Lock()
	if !s.initialized && s.initializing == nil {
		s.initializing, s.initRequest = make(chan struct{}), msg.ID
	}
	s.mu.Unlock()
	return ctx
}

// awaitInitialize lets a request through once initialize has been
// answered. One that comes while initialize runs (a client that does not
// wait for its answer) waits for it; one that comes before is refused.
func (s *session) awaitInitialize(ctx context.Context, method string) error {
	s.mu.Lock()
	done, running := s.initializing, s.initializing != nil
	initialized := s.initialized
	s.mu.Unlock()
	if running {
		select {
		case <-done:
		case <-ctx.Done():
			return ctx.Err()
		}
		initialized = s.isInitialized()
	}
	if !initialized {
		return jsonrpc.Errorf(jsonrpc.ErrInvalidRequest, "%s before initialize; send initialize first", method)
	}
	return nil
}

// clientReady handles notifications/initialized: the client is ready for
// requests from the servers. One that comes while initialize still runs
// takes effect when it has been answered.
func (s *session) clientReady(json.RawMessage) {
	s.mu.Lock()
	switch {
	case s.initialized:
		s.markReadyLocked()
	case s.initializing != nil:
		s.readyPending = true
	}
	s.mu.Unlock()
}

// markReadyLocked closes ready, once. A new client may have roots: servers
// that cached another answer should ask again. s.mu held.
func (s *session) markReadyLocked() {
	select {
	case <-s.ready:
		return
	default:
	}
	close(s.ready)
	if _, ok := s.clientCaps["roots"]; ok {
		s.g.rootsChanged() // never waits
	}
}
