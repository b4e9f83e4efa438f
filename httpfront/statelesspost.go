package httpfront

import (
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/mcpgate/mcpgate/jsonrpc"
	"github.com/mcpgate/mcpgate/proxy"
)

// maxStatelessRequests bounds the modern requests in flight at once, over
// all clients: as many as one legacy session may have. Each is a gateway
// session while it runs (a few goroutines); past the bound a request is
// refused with 503 rather than queued.
const maxStatelessRequests = 1024

// methodListen is the modern era's long-lived request: its answer is an
// event stream of the notifications it asked for, as a legacy session's GET
// stream is.
const methodListen = "subscriptions/listen"

// serveModern serves a POST whose body carries the modern envelope: checked
// (400 or 404 with a JSON-RPC error when it cannot be served), then served
// without a session when it can (a plain tools/call: see
// proxy/statelesscall.go), else by a gateway session of its own that ends
// with it. No session id is minted or echoed; one the client sent is
// ignored.
func (f *Front) serveModern(w http.ResponseWriter, r *http.Request, msg *jsonrpc.Message, claim json.RawMessage, bodySize int) {
	if !msg.IsRequest() {
		// The modern era defines no notification from the client over HTTP
		// (closing a response stream cancels its request), so there is
		// nothing to do with one: accepted, as the spec says of any.
		w.WriteHeader(http.StatusAccepted)
		return
	}
	checked, status, err := f.checkModern(r, msg, claim)
	if err != nil {
		jsonError(w, status, msg.ID, err)
		return
	}
	listen := msg.Method == methodListen
	client := f.clientOf(r)
	if refused := f.admitStateless(listen, bodySize, client); refused != nil {
		w.Header().Set("Retry-After", "1")
		jsonError(w, http.StatusServiceUnavailable, msg.ID, refused)
		return
	}
	opts := proxy.ServeOptions{Stateless: true, Client: client, Checked: checked}
	// The request's place and its count in f.serving are given back here,
	// unless Serve's goroutine takes them: even if ServeStateless panics
	// (net/http recovers it), or Close would wait for it forever.
	handed := false
	defer func() {
		if !handed {
			f.releaseStateless(listen, bodySize, client)
			f.serving.Done()
		}
	}()
	if call := f.g.ServeStateless(msg, opts); call != nil { // a plain tools/call: no session (see proxy/statelesscall.go)
		answer := call.Wait(r.Context().Done(), f.sessionsCtx.Done())
		// Served: Close waits no longer, as for a session's request, and
		// leaves the answer's write to http.Server.Shutdown, which bounds
		// it; a client that read nothing held Close for the write deadline.
		// The place is held until the answer is written.
		handed = true
		f.serving.Done()
		defer f.releaseStateless(listen, bodySize, client)
		if answer != nil {
			status := http.StatusOK // an answer in parts is a result
			if len(answer) == 1 {
				status = servedStatus(answer[0])
			}
			newClientWriter(w, f.writeTimeout).json(status, answer...)
		}
		return
	}
	// A listen's notifications can only come on an event stream, whatever
	// the client said it accepts.
	st := newStatelessStream(msg, listen || acceptsEvents(r))
	handed = true
	go func() {
		defer f.serving.Done()
		defer f.releaseStateless(listen, bodySize, client)
		f.g.Serve(f.sessionsCtx, st, opts)
	}()
	defer close(st.gone) // the client left, or has its answer: a request still running is cancelled
	st.serveHere()
	st.respond(w, r, f.writeTimeout, f.keepAlive)
}

// acceptsEvents reports whether the client takes an event stream: modern
// clients must list both types; one that sends no Accept takes anything.
func acceptsEvents(r *http.Request) bool {
	accept := header(r.Header, headerAccept)
	return accept == "" || strings.Contains(accept, "text/event-stream") || strings.Contains(accept, "*/*")
}

// admitStateless takes a place for a modern request, and a place among the
// Serve goroutines Close waits for. A listen is a long-lived stream, as a
// legacy session's GET stream is, and counts against max_sessions with the
// sessions; other requests count against maxStatelessRequests. While a
// request runs, its body also stays counted in the front's body budget:
// the gateway holds it until it is answered. client's share of them is
// bounded too (see tooManyStatelessOf). releaseStateless gives it all
// back.
func (f *Front) admitStateless(listen bool, bodySize int, client string) (err error) {
	if ok, _ := f.bodies.reserve(heldCost(bodySize)); !ok {
		return f.errBodiesHeld()
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	switch {
	case f.closed:
		err = errShuttingDown
	case listen && len(f.sessions)+f.listens >= f.cfg.MaxSessions:
		err = jsonrpc.Errorf(jsonrpc.ErrInternal, "too many sessions and listen streams open (max_sessions is %d); try again later", f.cfg.MaxSessions)
	case !listen && f.statelessInFlight >= f.maxStateless:
		err = jsonrpc.Errorf(jsonrpc.ErrInternal, "too many requests in flight (mcpgate serves at most %d at once without a session); try again shortly", f.maxStateless)
	case !listen:
		if share := f.tooManyStatelessOf(client); share != nil {
			err = jsonrpc.Errorf(jsonrpc.ErrInternal, "%s", share)
		}
	}
	if err != nil {
		f.bodies.release(heldCost(bodySize))
		if !errors.Is(err, errShuttingDown) {
			f.g.Logger().Warn("HTTP request refused", "method", methodOf(listen), "err", err)
		}
		return err
	}
	if listen {
		f.listens++
	} else {
		f.statelessInFlight++
		f.countStateless(client, 1)
	}
	f.serving.Add(1)
	return nil
}

// releaseStateless gives back what admitStateless took for a request, given
// the same arguments. (A method rather than a closure admitStateless
// returns: the closure was an allocation for every request.)
func (f *Front) releaseStateless(listen bool, bodySize int, client string) {
	f.mu.Lock()
	if listen {
		f.listens--
	} else {
		f.statelessInFlight--
		f.countStateless(client, -1)
	}
	f.mu.Unlock()
	f.bodies.release(heldCost(bodySize))
}

// errBodiesHeld is the answer to a request whose body the front cannot
// hold while it runs: its budget is taken by the requests in flight.
func (f *Front) errBodiesHeld() error {
	return jsonrpc.Errorf(jsonrpc.ErrInternal, "mcpgate holds too many request bodies at once (%d MiB in all); try again shortly", f.bodies.max>>20)
}

func methodOf(listen bool) string {
	if listen {
		return methodListen
	}
	return "(stateless request)"
}

// respond writes the request's answer to its POST: plain JSON when the
// answer comes first, else an event stream of what comes before it (with
// a keep-alive comment when it is quiet), then the answer, which ends it.
// It returns when the answer is out, the client left or stopped reading,
// or the session ended without an answer.
func (st *statelessStream) respond(w http.ResponseWriter, r *http.Request, writeTimeout, keepAliveEvery time.Duration) {
	cw := newClientWriter(w, writeTimeout)
	streaming := false
	var keepAlive *time.Ticker
	defer func() {
		if keepAlive != nil {
			keepAlive.Stop()
		}
	}()
	// write reports whether the POST is done: answered, or cut off.
	write := func(m postMsg) bool {
		switch {
		case m.none(): // no answer comes (the request was cancelled)
			if !streaming {
				cw.status(http.StatusAccepted)
			}
			return true
		case !streaming && m.final:
			status := http.StatusOK // an answer in parts is a result (jsonrpc.PartsWriter)
			if m.parts == nil {
				status = servedStatus(m.msg)
			}
			cw.json(status, m.pieces()...)
			return true
		case !streaming:
			streaming = true
			if cw.startEvents() != nil {
				return true
			}
			keepAlive = time.NewTicker(keepAliveEvery)
		}
		return cw.event(m.pieces()...) != nil || m.final
	}
	for {
		var quiet <-chan time.Time
		if keepAlive != nil {
			quiet = keepAlive.C
		}
		select {
		case m := <-st.out:
			if write(m) {
				return
			}
		case <-quiet:
			if cw.comment("keep-alive") != nil {
				return
			}
		case <-r.Context().Done():
			return
		case <-st.closed:
			for { // what was sent before the end still goes out
				select {
				case m := <-st.out:
					if write(m) {
						return
					}
					continue
				default:
				}
				if !streaming {
					cw.json(http.StatusServiceUnavailable, (&jsonrpc.Message{ID: st.req.ID, Error: jsonrpc.ToWire(errors.New("the request ended without an answer: mcpgate is shutting down"))}).Encode())
				}
				return
			}
		}
	}
}
