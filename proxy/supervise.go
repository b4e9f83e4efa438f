package proxy

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/mcpgate/mcpgate/config"
	"github.com/mcpgate/mcpgate/jsonrpc"
)

// link is how the gateway reaches one upstream: a child process over stdio
// (process.go), or a remote server over HTTP.
type link interface {
	jsonrpc.Stream
	// gone is closed when the other side has ended (the process exited).
	gone() <-chan struct{}
	// reason says why the link ended, waiting up to wait to find out.
	reason(wait time.Duration) string
	// stop ends the link for good; grace bounds each step.
	stop(grace time.Duration)
	// relatedTo says which of our requests a server's request came with,
	// when the transport says (over HTTP, the answer stream it came on);
	// false when it does not (stdio).
	relatedTo(serverRequest jsonrpc.ID) (ours jsonrpc.ID, ok bool)
}

// Reconnection backoff: exponential with full jitter, so that many gateways
// restarting at once do not retry in step, and a dead remote service is
// never hammered.
const backoffBase = time.Second

// backoff returns the wait before retry n (1-based): a random duration
// between 0 and min(max, base·2ⁿ); the first retry comes after ~1 s.
func backoff(n int, max time.Duration) time.Duration {
	ceiling := max
	if n < 30 && backoffBase<<n < max {
		ceiling = backoffBase << n
	}
	return rand.N(ceiling) + time.Millisecond
}

// supervise keeps the upstream connected until ctx ends: it connects, waits
// for the connection to end, and retries with backoff. It is the one
// goroutine that changes the upstream's connection; the gateway owns it.
func (u *upstream) supervise(ctx context.Context) {
	defer u.attemptEnded() // nobody waits on an attempt that will not come
	failures := 0
	lastLogged := ""
	for {
		u.mu.Lock()
		if u.attempt == nil {
			u.attemptStarting()
		}
		u.mu.Unlock()
		w, err := u.dialGated(ctx)
		if err == nil {
			u.recordConnected()
			// Said before the clients hear of it (upstreamCame): a client
			// that acts on the news and leaves may end mcpgate before the
			// line below would have been reached.
			if failures > 0 || u.restartsSoFar() > 0 || lastLogged != "" {
				u.log.Info("upstream reconnected", "after_failures", failures)
			}
			// Before ready is closed: clients still waiting in initialize
			// will see these items in their first list and need no notice.
			u.g.upstreamCame(u)
			if w.isModern() && u.listensTo() {
				u.g.goBackground(func() { u.keepListening(w) })
			}
		}
		u.attemptEnded()
		select {
		case <-u.ready:
		default:
			close(u.ready)
			if err != nil {
				u.g.withdrawCached(u)
			}
		}
		if ctx.Err() != nil {
			if w != nil {
				w.close(u.g.live().cfg.StopGrace)
			}
			return
		}
		if err == nil {
			failures, lastLogged = 0, ""
			reason := u.awaitEnd(ctx, w)
			if ctx.Err() != nil {
				return
			}
			u.log.Error("upstream disconnected", "reason", reason)
			u.recordEvent("upstream_disconnected", "reason", reason)
			u.g.upstreamGone(u)
			lastLogged = reason
		} else if err.Error() != lastLogged {
			// Logged once per distinct reason, not once per retry.
			u.log.Error("upstream unavailable", "reason", err.Error())
			u.recordEvent("upstream_unavailable", "reason", err.Error())
			lastLogged = err.Error()
		} else {
			u.log.Debug("upstream still unavailable", "reason", err.Error(), "failures", failures)
		}
		failures++
		wait := backoff(failures, u.g.live().cfg.MaxBackoff)
		timer := time.NewTimer(wait)
		select {
		case <-timer.C:
		case <-u.kick:
			timer.Stop()
		case <-ctx.Done():
			timer.Stop()
			return
		}
	}
}

// attemptStarting marks a connection attempt as under way. u.mu held.
func (u *upstream) attemptStarting() {
	if u.attempt == nil {
		u.attempt = make(chan struct{})
	}
}

func (u *upstream) attemptEnded() {
	u.mu.Lock()
	if u.attempt != nil {
		close(u.attempt)
		u.attempt = nil
	}
	u.mu.Unlock()
}

func (u *upstream) restartsSoFar() int {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.restarts
}

// initTimeout bounds initialize on its own: a server that never answers it
// is reported and retried, not waited for.
func (u *upstream) initTimeout() time.Duration { return u.cfg.InitTimeout }

// dial starts the server and opens the connection in its era (see
// probe.go). Nothing is listed: discovery is the clients' to ask for
// (DESIGN D1).
func (u *upstream) dial(ctx context.Context) (*wire, error) {
	start := time.Now()
	w, err := u.connect()
	if err != nil {
		return nil, u.fail(err.Error())
	}
	res, err := u.handshake(ctx, w)
	if errors.Is(err, errProbeClosed) {
		// A legacy server that exits when asked anything before
		// initialize: started again, it gets initialize first.
		u.log.Info("upstream closed the connection when probed with server/discover: it is of the legacy era; starting it again")
		w.close(u.g.live().cfg.StopGrace)
		if w, err = u.connect(); err != nil {
			return nil, u.fail(err.Error())
		}
		res, err = u.initialize(ctx, w)
	}
	if err != nil {
		reason := "initialize failed: " + err.Error()
		if w.isModern() {
			reason = "server/discover failed: " + err.Error()
		}
		switch {
		case ctx.Err() != nil:
			reason = u.stopReason()
		case errors.Is(err, context.DeadlineExceeded):
			reason = fmt.Sprintf("did not answer initialize within %v (raise mcpServers.%s.init_timeout)", u.initTimeout(), u.name)
		case errors.Is(err, jsonrpc.ErrClosed):
			reason = w.link.reason(2 * time.Second)
		}
		w.close(u.g.live().cfg.StopGrace)
		return nil, u.fail(reason)
	}

	u.mu.Lock()
	if u.state == stateStopped {
		u.mu.Unlock()
		w.close(u.g.live().cfg.StopGrace)
		return nil, errors.New("stopped")
	}
	if u.connectedOnce {
		u.restarts++
	}
	u.connectedOnce = true
	u.state, u.wire, u.init, u.since = stateConnected, w, res, time.Since(start)
	u.reason, u.kicked = "", false
	u.mu.Unlock()
	if u.base != u {
		u.base.mu.Lock()
		u.base.lastInit, u.base.hadInit = res, true
		u.base.mu.Unlock()
		u.applyOwnerLogLevel(ctx, w)
	}
	u.log.Info("upstream connected", "protocol", res.ProtocolVersion, "upstream_name", res.ServerInfo.Name, "upstream_version", res.ServerInfo.Version)
	return w, nil
}

// connect starts the server (or reaches it) and puts a JSON-RPC
// connection over the link.
func (u *upstream) connect() (*wire, error) {
	var l link
	if u.cfg.Type == config.TypeStdio {
		p, err := startProcess(u.cfg, processOptions{maxMessage: u.g.live().cfg.MaxMessage, grace: u.g.live().cfg.StopGrace, wardens: u.g.wardens, redactCut: u.g.live().cfg.RedactCut}, func(line string) { u.g.upstreamStderr(u.name, line) })
		if err != nil {
			return nil, err
		}
		u.watchResults(p.Stream)
		l = p
	} else {
		hl := newHTTPLink(u.cfg, u.g.live().cfg.MaxMessage, u.g.version, u.log)
		hl.onReinit = u.resubscribe
		hl.toolSchema = u.listedSchema
		hl.redactCut = u.g.live().cfg.RedactCut
		l = hl
	}
	out := newOutbox(l, upstreamQueueBytes, false, u.g.live().cfg.StopGrace, func(queued int) {
		u.log.Warn("upstream is not reading: notifications to it (cancellations, roots changes) are dropped until it catches up", "queued_bytes", queued)
	})
	givenUp := new(givenUpCalls)
	conn := jsonrpc.NewConn(out, jsonrpc.Options{
		Handler: jsonrpc.HandlerFunc(u.handle),
		OnBadInput: func(err error) {
			u.log.Warn("skipped bad message from upstream", "err", err)
		},
		// A server flooding requests to the client side (sampling,
		// elicitation, roots) gets the excess refused at once.
		MaxInFlight:      maxServerRequests,
		MaxInFlightBytes: maxServerRequestBytes,
		Received:         u.arrived,
		LateAnswer: func(id jsonrpc.ID) {
			u.prescan.lateAnswer()
			givenUp.forget(id)
		},
	}).Start()
	return &wire{conn: conn, out: out, link: l, listen: newUpListen(), givenUp: givenUp}, nil
}

// awaitEnd waits for the connection to end (a crash, or the server closing
// its output) and cleans up. Every call in flight has already been failed
// by the Conn, with the reason.
func (u *upstream) awaitEnd(ctx context.Context, w *wire) string {
	select {
	case <-w.conn.Done():
	case <-w.link.gone():
	case <-ctx.Done():
		return ""
	}
	w.endListens()
	u.prescan.last.Store(nil) // its last big result's, if never decided on
	reason := u.g.redact(w.link.reason(2 * time.Second))
	u.mu.Lock()
	if u.wire == w && u.state == stateConnected {
		u.state, u.reason, u.wire = stateFailed, reason, nil
		for k := range u.lists {
			u.lists[k].fresh = false
			u.lists[k].gen++
		}
	}
	u.mu.Unlock()
	w.close(u.g.live().cfg.StopGrace)
	return reason
}

// fail records why the upstream is not connected. The reason is redacted
// here, once, since it travels far: into errors for every request, lists'
// _meta, logs, and mcpgate check.
func (u *upstream) fail(reason string) error {
	reason = u.g.redact(reason)
	u.mu.Lock()
	if u.state != stateStopped {
		u.state, u.reason = stateFailed, reason
	}
	u.mu.Unlock()
	return errors.New(reason)
}

// upstreamCame tells clients that a server's items may have appeared.
// A list clients were given from the discovery cache is fetched again and
// compared: they hear of it only if it differs.
func (g *Gateway) upstreamCame(u *upstream) {
	g.discovery.connected(u)
	for _, k := range []kind{kindTools, kindPrompts, kindResources} {
		_, offered := u.capability(kinds[k].capability)
		switch served := g.discovery.takeServed(u, k); {
		case offered && served:
			u.changes[k].notify()
		case offered || served:
			u.notifyListChanged(k)
		}
	}
}
