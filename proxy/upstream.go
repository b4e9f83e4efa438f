package proxy

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
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
	limit *limiter      // max_concurrent; instances use their base's (see acquirePlace)
	kick  chan struct{} // 1-buffered: asks the supervisor to try again now

	deadlines deadlineWheel // of the requests to it

	changes [numKinds]*coalescer // list_changed coalescing, per notification
	isolationFields

	mu            sync.Mutex // guards the fields below
	state         upstreamState
	wire          *wire // the live connection; nil when not connected
	init          initializeResult
	reason        string        // why it is not connected
	since         time.Duration // how long initialize took
	attempt       chan struct{} // closed when the connection attempt under way ends; nil when none
	kicked        bool          // a request already asked for an immediate attempt since the last failure
	restarts      int           // reconnections after the first connection
	connectedOnce bool
	lists         [numKinds]listCache
	callers       []*caller    // client sessions with a request in flight here, in no order (see caller.done)
	queued        atomic.Int32 // requests waiting for a place among max_concurrent
	inGate        atomic.Bool  // its start waits for a place among start_concurrency
	retired       atomic.Bool  // a config reload removed or replaced it: it is not started again
	oddResult     atomic.Bool  // it answered with a result that is not an object: logged (once)

	withheld  [numKinds]map[string]withheld // items the list policies kept from clients, by upstream name
	badHeader map[string]string             // tools left out for invalid x-mcp-header annotations: name → why

	// policies are the configured server's (instances use their base's);
	// nil: none. Reload replaces them when the config's change.
	policies atomic.Pointer[serverPolicies]
	// prescan: the last big result read from it, prescanned (prescan.go).
	prescan prescanSlot
}

// wire is one connection to the server: the link, the outbox in front of it
// (every message to the server goes through it, written by one goroutine),
// and the JSON-RPC connection over both.
type wire struct {
	conn   *jsonrpc.Conn
	out    *outbox
	link   link
	modern atomic.Bool // the server speaks the modern era: requests carry the envelope
	listen *upListen   // a modern server's subscriptions/listen (see upstreamlisten.go)
	// givenUp: calls over this connection that their clients gave up on
	// (see givenup.go)
	givenUp *givenUpCalls
}

// eraLink is a link whose transport differs by era (HTTP: headers,
// sessions).
type eraLink interface{ setModern(bool) }

func (w *wire) setEra(modern bool) {
	w.modern.Store(modern)
	if l, ok := w.link.(eraLink); ok {
		l.setModern(modern)
	}
}

func (w *wire) isModern() bool { return w.modern.Load() }

func newUpstream(g *Gateway, s config.Server) *upstream {
	u := &upstream{name: s.Name, cfg: s, g: g, log: g.log.With("server", s.Name), ready: make(chan struct{}), kick: make(chan struct{}, 1), limit: newLimiter(s.MaxConcurrent, s.MaxQueued)}
	u.base = u
	for k := range numKinds {
		u.changes[k] = &coalescer{delay: changeDebounce, run: func() { u.refreshLists(k) }, begin: g.addBackground, end: g.background.Done}
	}
	return u
}

// connection returns the live connection or the error that says why there
// is none. For a server that is down, the first request since it failed asks
// for one immediate attempt and waits for it, as do requests arriving
// meanwhile; after that, requests fail fast with the reason until the next
// scheduled retry succeeds. A dead server is never hammered.
func (u *upstream) connection() (*wire, error) {
	return u.connectionCtx(context.Background())
}

// connectionNoWait is connection without asking for an attempt: for views
// of the state that must not wait for a server to restart.
func (u *upstream) connectionNoWait() (*wire, error) {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.connLocked()
}

func (u *upstream) connectionCtx(ctx context.Context) (*wire, error) {
	u.mu.Lock()
	// A connection that has ended before the supervisor saw it (it is
	// finding out why: the exit status) is a failed one already: wait for
	// the next attempt, rather than fail on the dead connection.
	dead := u.state == stateConnected && u.wire != nil && u.wire.ended()
	if (u.state == stateFailed || dead) && !u.kicked {
		u.kicked = true
		select {
		case u.kick <- struct{}{}:
		default:
		}
		u.attemptStarting()
	}
	wait := u.attempt
	u.mu.Unlock()
	if wait != nil {
		limit := u.initTimeout() + time.Second
		timer := time.NewTimer(limit)
		defer timer.Stop()
	waiting:
		for {
			select {
			case <-wait:
				break waiting
			case <-ctx.Done():
				break waiting
			case <-timer.C:
				if !u.inGate.Load() {
					break waiting
				}
				// Its start waits for others' (start_concurrency): its
				// init_timeout has not begun.
				timer.Reset(limit)
			}
		}
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.connLocked()
}

// ended reports whether the connection has ended (the server exited or
// closed its output), whether or not its supervisor has seen it yet.
func (w *wire) ended() bool {
	select {
	case <-w.conn.Done():
		return true
	default:
		return false
	}
}

func (u *upstream) connLocked() (*wire, error) {
	switch u.state {
	case stateConnected:
		return u.wire, nil
	case stateConnecting:
		return nil, jsonrpc.Errorf(errUnavailable, "upstream %q is still starting", u.name)
	case stateStopped:
		return nil, jsonrpc.Errorf(errUnavailable, "upstream %q is stopped (%s)", u.name, u.stopReason())
	default:
		return nil, jsonrpc.Errorf(errUnavailable, "upstream %q is unavailable: %s", u.name, u.reason)
	}
}

// isModern reports whether the live connection is of the modern era.
func (u *upstream) isModern() bool {
	w, err := u.connectionNoWait()
	return err == nil && w.isModern()
}

func (u *upstream) connected() bool {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.state == stateConnected
}

// capability returns the raw capability the server declared, if it is
// connected now: what the live connection offers. (knownInit answers for a
// configured server, whether or not it is connected, and for an isolated
// one, whose instances connect per session.)
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
	return u.callWatched(ctx, method, params, u.newDeadline())
}

// newDeadline is a deadline for one request to u: its timeout, pushed back
// by progress up to its max_timeout.
func (u *upstream) newDeadline() *deadline {
	return newDeadlineOn(&u.deadlines, u.cfg.Timeout, u.cfg.MaxTimeout)
}

// initDeadline readies d, unused, as newDeadline makes one.
func (u *upstream) initDeadline(d *deadline) {
	d.init(&u.deadlines, u.cfg.Timeout, u.cfg.MaxTimeout)
}

// errDeadline is why a request ended at its deadline.
var errDeadline = errors.New("upstream deadline")

// callWatched is call with the request's deadline made by the caller, who
// has handed it to the progress table: each progress notification for the
// request pushes it back (up to the server's max_timeout).
func (u *upstream) callWatched(ctx context.Context, method string, params json.RawMessage, dl *deadline) (json.RawMessage, error) {
	w, err := u.connectionCtx(ctx)
	if err != nil {
		return nil, err
	}
	if u.base != u {
		u.touch()
		defer u.touch()
	}
	// The deadline covers the whole request: waiting for a place among
	// max_concurrent, for room in the outbox, the write, and the answer.
	tctx := dl.watch(ctx)
	defer dl.end()
	u.queued.Add(1) // not idle while it waits (an instance's reaper)
	release, err := u.acquirePlace(ctx, tctx, method)
	u.queued.Add(-1)
	if err != nil {
		return nil, err
	}
	defer release()
	// The connection as it is once the request has its place: the server
	// may have been restarted while it waited.
	if now, err := u.connectionNoWait(); err == nil {
		w = now
	}
	// Only now is it a request in flight to the server: one still waiting
	// for a place must not make a server's request to a client look as if
	// it could be this session's (causeOf).
	var c *caller
	if r, ok := requestFrom(ctx); ok {
		c = u.addCaller(r, dl)
		defer c.done()
	}
	call, err := w.conn.Go(tctx, method, u.outgoing(ctx, w, method, params))
	var res json.RawMessage
	if err == nil {
		if c != nil {
			c.sent(call.ID())
		}
		dl.sent(call)
		res, err = call.Wait(ctx)
		if err == nil {
			return res, nil
		}
	}
	return nil, u.callFailed(ctx, w, call, dl, method, err)
}

// callFailed is why a request to u under ctx failed with err, as the
// client is told: the server is told to stop when the client or the
// deadline gave up on it (call, if sent).
func (u *upstream) callFailed(ctx context.Context, w *wire, call *jsonrpc.Call, dl *deadline, method string, err error) error {
	var tooLarge *jsonrpc.TooLargeError
	switch {
	case ctx.Err() != nil:
		if call != nil {
			u.gaveUp(ctx, w, call.ID(), err)
			u.sendCancel(w, call.ID(), "cancelled by the client")
		}
		return ctx.Err()
	case dl.expired():
		if call != nil {
			u.gaveUp(ctx, w, call.ID(), err)
			u.sendCancel(w, call.ID(), "mcpgate timeout")
		}
		if dl.hitLimit() {
			return jsonrpc.Errorf(errTimeout, "upstream %q: %s still running after max_timeout (%v), though it reported progress; upstream kept running (raise mcpServers.%s.max_timeout)", u.name, method, u.cfg.MaxTimeout, u.name)
		}
		return jsonrpc.Errorf(errTimeout, "upstream %q: %s timed out after %v without an answer or progress; upstream kept running (raise mcpServers.%s.timeout)", u.name, method, u.cfg.Timeout, u.name)
	case errors.As(err, &tooLarge):
		return jsonrpc.Errorf(errUnavailable, "upstream %q: its answer to %s was over %d bytes, more than mcpgate accepts (raise max_message_bytes)", u.name, method, tooLarge.Limit)
	case errors.Is(err, jsonrpc.ErrClosed):
		return u.closedError(method, w.link)
	case errors.Is(err, jsonrpc.ErrInvalidResponse):
		// Its parse error is not the client's: passed on as it is (-32700),
		// it reads as if the client's request were broken.
		return jsonrpc.Errorf(errUnavailable, "upstream %q: its answer to %s is not valid JSON-RPC: %s", u.name, method, strings.TrimPrefix(err.Error(), jsonrpc.ErrInvalidResponse.Error()+": "))
	}
	return err
}

func (u *upstream) currentLink() link {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.wire == nil {
		return nil
	}
	return u.wire.link
}

// closedError explains a call that failed because the connection over l
// ended: with the exit status and last stderr line of a process.
func (u *upstream) closedError(method string, l link) error {
	if l == nil {
		return jsonrpc.Errorf(errUnavailable, "upstream %q: its connection closed during %s", u.name, method)
	}
	return jsonrpc.Errorf(errUnavailable, "upstream %q is unavailable: %s (during %s)", u.name, l.reason(2*time.Second), method)
}

// gaveUp remembers that the client request ctx serves gave up its call
// upID over w before the server answered (see givenup.go): before the
// server is told, which may then ask about it all the same. err is how the
// call ended: an answer of the server's (an error), though the client or
// the deadline ended meanwhile, is not a call given up: the server is done
// with it.
func (u *upstream) gaveUp(ctx context.Context, w *wire, upID jsonrpc.ID, err error) {
	if !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, errDeadline) {
		return
	}
	if r, ok := requestFrom(ctx); ok {
		w.givenUp.add(r.s, upID, time.Now(), u.givenUpWindow())
	}
}

// requestAbandoner is a link that holds resources for each request in
// flight (over HTTP, one of a bounded number of POSTs): it frees them as
// soon as the gateway gives up on the request, without waiting for the
// cancellation to come through the outbox.
type requestAbandoner interface{ abandon(jsonrpc.ID) }

// sendCancel tells the server to stop working on id. It never waits: the
// notification is queued if there is room (cancellation is best effort),
// so a server that does not read its stdin cannot hold up the answer.
func (u *upstream) sendCancel(w *wire, id jsonrpc.ID, reason string) {
	if a, ok := w.link.(requestAbandoner); ok {
		a.abandon(id)
	}
	params := mustJSON(map[string]any{"requestId": id, "reason": reason})
	w.out.offer((&jsonrpc.Message{Method: notifyCancelled, Params: params}).Encode(), jsonrpc.ID{})
}

// stop disconnects and ends the server. What is queued for it (the last
// cancellations) gets a moment to reach it first.
func (u *upstream) stop() {
	u.mu.Lock()
	w := u.wire
	u.state, u.wire = stateStopped, nil
	u.mu.Unlock()
	if w != nil {
		w.close(u.g.live().cfg.StopGrace)
	}
}

// close ends the connection: what is queued gets up to grace to be
// written (see outbox.Close), then the link is stopped (grace bounds each
// of its steps).
func (w *wire) close(grace time.Duration) {
	w.conn.Close()
	w.link.stop(grace)
}
