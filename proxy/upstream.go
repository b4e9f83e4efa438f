package proxy

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/mcpgate/mcpgate/config"
	"github.com/mcpgate/mcpgate/jsonrpc"
)

// Errors the gateway makes itself carry these codes. -32001 is the request
// timeout code the TypeScript SDK uses, so clients already know it.
var (
	// errUnavailable: the upstream is not connected (failed, crashed, stopped).
	errUnavailable = &jsonrpc.Error{Code: -32000, Message: "upstream unavailable"}
	// errTimeout: the upstream did not answer in time.
	errTimeout = &jsonrpc.Error{Code: -32001, Message: "upstream timed out"}
)

type upstreamState int

const (
	stateConnecting upstreamState = iota
	stateConnected
	stateFailed
	stateStopped
)

// upstream is one configured MCP server, seen from the gateway as its client.
type upstream struct {
	name string
	cfg  config.Server
	g    *Gateway
	log  *slog.Logger

	ready chan struct{} // closed when the first connection attempt has ended

	mu      sync.Mutex // guards the fields below
	state   upstreamState
	conn    *jsonrpc.Conn
	proc    *process
	init    initializeResult
	reason  string        // why it is not connected
	since   time.Duration // how long initialize took
	lists   [numKinds]listCache
	callers []*caller             // client sessions with a request in flight here, oldest first
	change  [numKinds]changeState // list_changed coalescing, per list
	cancel  sync.WaitGroup        // best-effort cancellation sends
}

func newUpstream(g *Gateway, s config.Server) *upstream {
	return &upstream{name: s.Name, cfg: s, g: g, log: g.log.With("server", s.Name), ready: make(chan struct{})}
}

// connect starts the server and runs the initialize handshake. Nothing is
// listed: discovery is the clients' to ask for (DESIGN D1).
func (u *upstream) connect(ctx context.Context) error {
	defer func() {
		select {
		case <-u.ready:
		default:
			close(u.ready)
		}
	}()
	if u.cfg.Type != config.TypeStdio {
		return u.fail(fmt.Sprintf("%s upstreams (url %q) are not supported by this build of mcpgate; only stdio (command) servers are", u.cfg.Type, u.cfg.URL))
	}
	start := time.Now()
	proc, err := startProcess(u.cfg, func(line string) { u.g.upstreamStderr(u.name, line) })
	if err != nil {
		return u.fail(err.Error())
	}
	conn := jsonrpc.NewConn(jsonrpc.NewLineStream(proc.stdout, proc.stdin, proc, u.g.maxMessage), jsonrpc.Options{
		Handler: jsonrpc.HandlerFunc(u.handle),
		OnBadInput: func(err error) {
			u.log.Warn("skipped bad message from upstream", "err", err)
		},
	}).Start()
	params := mustJSON(map[string]any{
		"protocolVersion": LatestVersion,
		// Declared to every server, so that servers which offer some tools
		// only to capable clients offer them; a request the actual client
		// cannot serve gets an error (see serveClientRequest).
		"capabilities": map[string]any{
			"sampling":    map[string]any{},
			"elicitation": map[string]any{"form": map[string]any{}, "url": map[string]any{}},
			"roots":       map[string]any{"listChanged": true},
		},
		"clientInfo": map[string]string{"name": "mcpgate", "version": u.g.version},
	})
	ictx, cancel := context.WithTimeout(ctx, u.cfg.Timeout)
	raw, err := conn.Call(ictx, methodInitialize, params)
	cancel()
	var res initializeResult
	if err == nil {
		err = json.Unmarshal(raw, &res)
	}
	if err == nil && !isSupportedVersion(res.ProtocolVersion) {
		err = fmt.Errorf("it answered protocol version %q, which mcpgate does not speak (it speaks %v)", res.ProtocolVersion, supportedVersions)
	}
	if err == nil {
		err = conn.Notify(notifyInitialized, nil)
	}
	if err != nil {
		reason := "initialize failed: " + err.Error()
		switch {
		case errors.Is(err, context.DeadlineExceeded):
			reason = fmt.Sprintf("did not answer initialize within %v", u.cfg.Timeout)
		case errors.Is(err, jsonrpc.ErrClosed):
			reason = proc.exitReason(2 * time.Second)
		}
		conn.Close()
		proc.stop(u.g.stopGrace)
		return u.fail(reason)
	}

	u.mu.Lock()
	if u.state == stateStopped {
		u.mu.Unlock()
		conn.Close()
		proc.stop(u.g.stopGrace)
		return errors.New("stopped")
	}
	u.state, u.conn, u.proc, u.init, u.since = stateConnected, conn, proc, res, time.Since(start)
	u.reason = ""
	u.mu.Unlock()
	u.log.Info("upstream connected", "protocol", res.ProtocolVersion, "upstream_name", res.ServerInfo.Name, "upstream_version", res.ServerInfo.Version)
	go u.watch(conn, proc)
	return nil
}

// watch notices the end of a connection: a crash, or the server closing
// its output. Every call in flight has already been failed by the Conn.
func (u *upstream) watch(conn *jsonrpc.Conn, proc *process) {
	select {
	case <-conn.Done():
	case <-proc.exited:
	}
	u.mu.Lock()
	if u.conn != conn || u.state != stateConnected {
		u.mu.Unlock()
		return
	}
	u.mu.Unlock()
	reason := proc.exitReason(2 * time.Second)
	u.mu.Lock()
	if u.conn == conn && u.state == stateConnected {
		u.state, u.reason, u.conn, u.proc = stateFailed, reason, nil, nil
		for k := range u.lists {
			u.lists[k].fresh = false
			u.lists[k].gen++
		}
	}
	u.mu.Unlock()
	u.log.Error("upstream disconnected", "reason", reason)
	conn.Close()
	proc.stop(u.g.stopGrace)
	u.g.upstreamGone(u)
}

func (u *upstream) fail(reason string) error {
	u.mu.Lock()
	if u.state != stateStopped {
		u.state, u.reason = stateFailed, reason
	}
	u.mu.Unlock()
	u.log.Error("upstream unavailable", "reason", reason)
	return errors.New(reason)
}

// connection returns the live connection or the error that says why there
// is none.
func (u *upstream) connection() (*jsonrpc.Conn, error) {
	u.mu.Lock()
	defer u.mu.Unlock()
	switch u.state {
	case stateConnected:
		return u.conn, nil
	case stateConnecting:
		return nil, jsonrpc.Errorf(errUnavailable, "upstream %q is still starting", u.name)
	case stateStopped:
		return nil, jsonrpc.Errorf(errUnavailable, "upstream %q is stopped (mcpgate is shutting down)", u.name)
	default:
		return nil, jsonrpc.Errorf(errUnavailable, "upstream %q is unavailable: %s", u.name, u.reason)
	}
}

func (u *upstream) connected() bool {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.state == stateConnected
}

// capability returns the raw capability the server declared, if any.
func (u *upstream) capability(name string) (json.RawMessage, bool) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.state != stateConnected {
		return nil, false
	}
	c, ok := u.init.Capabilities[name]
	return c, ok
}

// call sends one request and waits for its answer within the server's
// timeout. The upstream's own JSON-RPC errors come back unchanged; errors the
// gateway makes name the server. If ctx ends first (the client cancelled, or
// is gone), or the timeout passes, the server is told with
// notifications/cancelled; it is not restarted: a slow tool is not a dead
// server.
func (u *upstream) call(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
	conn, err := u.connection()
	if err != nil {
		return nil, err
	}
	if s := sessionFrom(ctx); s != nil {
		defer u.addCaller(s)()
	}
	call, err := conn.Go(method, params)
	if err != nil {
		return nil, u.closedError(method)
	}
	tctx, cancel := context.WithTimeout(ctx, u.cfg.Timeout)
	defer cancel()
	res, err := call.Wait(tctx)
	if err == nil {
		return res, nil
	}
	switch {
	case ctx.Err() != nil:
		u.sendCancel(conn, call.ID(), "cancelled by the client")
		return nil, ctx.Err()
	case errors.Is(err, context.DeadlineExceeded):
		u.sendCancel(conn, call.ID(), fmt.Sprintf("mcpgate timeout after %v", u.cfg.Timeout))
		return nil, jsonrpc.Errorf(errTimeout, "upstream %q: %s timed out after %v; upstream kept running (raise mcpServers.%s.timeout)", u.name, method, u.cfg.Timeout, u.name)
	case errors.Is(err, jsonrpc.ErrClosed):
		return nil, u.closedError(method)
	}
	return nil, err
}

// closedError explains a call that failed because the connection ended.
func (u *upstream) closedError(method string) error {
	u.mu.Lock()
	proc := u.proc
	u.mu.Unlock()
	reason := "its connection closed"
	if proc != nil {
		reason = proc.exitReason(2 * time.Second)
	} else if _, err := u.connection(); err != nil {
		return fmt.Errorf("%w (during %s)", err, method)
	}
	return jsonrpc.Errorf(errUnavailable, "upstream %q is unavailable: %s (during %s)", u.name, reason, method)
}

// sendCancel tells the server to stop working on id, off the caller's path:
// a server that does not read its stdin must not hold up the answer.
func (u *upstream) sendCancel(conn *jsonrpc.Conn, id jsonrpc.ID, reason string) {
	params := mustJSON(map[string]any{"requestId": id, "reason": reason})
	u.cancel.Add(1)
	go func() {
		defer u.cancel.Done()
		conn.Notify(notifyCancelled, params)
	}()
}

// handle serves what the server sends on its own: requests to the client
// side and notifications.
func (u *upstream) handle(ctx context.Context, msg *jsonrpc.Message) (res json.RawMessage, err error) {
	defer u.g.recoverRequest(msg, &err)
	switch msg.Method {
	case methodPing:
		return json.RawMessage("{}"), nil
	case methodSamplingCreate, methodElicitationCreate, methodRootsList:
		return u.serveClientRequest(ctx, msg)
	case notifyCancelled:
		var p struct {
			RequestID jsonrpc.ID `json:"requestId"`
		}
		if json.Unmarshal(msg.Params, &p) == nil && p.RequestID.IsValid() {
			if conn, err := u.connection(); err == nil {
				conn.CancelIncoming(p.RequestID)
			}
		}
	case notifyElicitationComplete:
		u.g.relayElicitationComplete(u, msg.Params)
	case notifyResourceUpdated:
		u.g.relayResourceUpdated(u, msg.Params)
	case notifyToolsChanged:
		u.listChanged(kindTools)
	case notifyPromptsChanged:
		u.listChanged(kindPrompts)
	case notifyResourcesChanged:
		u.listChanged(kindResources)
	case notifyMessage:
		u.g.relayLog(u, msg.Params)
	case notifyProgress:
		u.g.relayProgress(u, msg.Params)
	default:
		if msg.IsRequest() {
			return nil, jsonrpc.Errorf(jsonrpc.ErrMethodNotFound, "mcpgate does not serve %s to upstreams", msg.Method)
		}
	}
	return nil, nil
}

// stop disconnects and ends the server's process. Cancellations still being
// sent get a moment to reach the server first.
func (u *upstream) stop() {
	u.mu.Lock()
	conn, proc := u.conn, u.proc
	u.state, u.conn, u.proc = stateStopped, nil, nil
	u.mu.Unlock()
	sent := make(chan struct{})
	go func() { u.cancel.Wait(); close(sent) }()
	select {
	case <-sent:
	case <-time.After(u.g.stopGrace):
	}
	if conn != nil {
		conn.Close() // also unblocks a cancellation stuck on a full pipe
	}
	if proc != nil {
		proc.stop(u.g.stopGrace)
	}
	<-sent
}
