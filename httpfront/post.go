package httpfront

import (
	"encoding/json"
	"net/http"
	"strings"
	"time"

	"github.com/mcpgate/mcpgate/internal/mcpheader"
	"github.com/mcpgate/mcpgate/internal/rawjson"
	"github.com/mcpgate/mcpgate/jsonrpc"
	"github.com/mcpgate/mcpgate/proxy"
)

func (f *Front) serveMCP(w http.ResponseWriter, r *http.Request) {
	switch r.Method {
	case http.MethodPost:
		f.servePost(w, r, time.Time{})
	case http.MethodGet, http.MethodDelete:
		if header(r.Header, headerSession) == "" {
			// Only a legacy session has a stream to GET or an end to
			// DELETE; the modern era has neither, and its spec answers 405.
			w.Header().Set("Allow", http.MethodPost)
			http.Error(w, r.Method+" needs an Mcp-Session-Id (a legacy session, opened by initialize); a client of MCP 2026-07-28 sends every request as a POST", http.StatusMethodNotAllowed)
			return
		}
		if r.Method == http.MethodGet {
			f.serveGet(w, r)
		} else {
			f.serveDelete(w, r)
		}
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

// errNoSession answers a legacy message that names no session and is not
// initialize. It is what a legacy server answers, and so what a client of
// both eras must read as "not a modern server" when its server/discover
// probe comes without the envelope: a 400 whose JSON-RPC error is none of
// the modern era's codes (-32020, -32021, -32022). Not -32601: the spec
// lists "unknown method" among the errors only a modern server returns.
var errNoSession = jsonrpc.Errorf(jsonrpc.ErrInvalidRequest, "missing %s header: send initialize first, then the session id it returned", headerSession)

// servePost serves a POST to the MCP path. written is the write deadline
// set for it as it came (ServeHTTP's), zero when not known: its answer,
// written soon after, need not set it again (clientWriter.answerDeadline).
func (f *Front) servePost(w http.ResponseWriter, r *http.Request, written time.Time) {
	var hs *httpSession
	if header(r.Header, headerSession) != "" && !isModernVersion(header(r.Header, headerProtocol)) {
		// Before the body: a POST to an unknown session costs no read.
		// (A modern request's session id is ignored, and its body read:
		// one that claims the modern era without saying so in its
		// headers finds out from the body's answer, below.)
		var status int
		var err error
		if hs, status, err = f.lookup(r); err != nil {
			http.Error(w, err.Error(), status)
			return
		}
		hs.use(1)
		defer func() {
			if hs != nil {
				hs.use(-1)
			}
		}()
	}
	body, ok := f.readBody(w, r)
	if !ok {
		return
	}
	msg, err := jsonrpc.DecodeBody(body)
	batch := len(body) > 0 && strings.HasPrefix(strings.TrimSpace(string(body[:min(len(body), 16)])), "[")
	if batch && batchHasModern(body) {
		jsonError(w, http.StatusBadRequest, jsonrpc.ID{}, jsonrpc.Errorf(jsonrpc.ErrInvalidRequest, "a JSON-RPC batch may not carry requests of protocol %s: send each as a POST of its own", proxy.ModernVersions()[0]))
		return
	}
	if err != nil && !batch {
		id := jsonrpc.ID{}
		if msg != nil {
			id = msg.ID
		}
		jsonError(w, http.StatusBadRequest, id, err)
		return
	}
	if !batch {
		if claim := modernClaim(msg); claim != nil {
			if hs != nil { // its session id is ignored: the request does not keep that session in use
				hs.use(-1)
				hs = nil
			}
			f.serveModern(w, r, msg, claim, len(body))
			return
		}
		if v := header(r.Header, headerProtocol); isModernVersion(v) {
			if msg.IsRequest() {
				if err := envelopeFault(msg.Params); err != nil {
					jsonError(w, http.StatusBadRequest, msg.ID, err)
					return
				}
				jsonError(w, http.StatusBadRequest, msg.ID, jsonrpc.Errorf(jsonrpc.ErrInvalidParams,
					"the %s header names protocol %s, but the request has no _meta envelope: a request of that protocol carries %q and the client's capabilities in params._meta", mcpheader.ProtocolVersion, quoteShort(v), metaProtocolVersion))
				return
			}
			w.WriteHeader(http.StatusAccepted) // a modern notification: nothing to do with it over HTTP
			return
		}
	}
	f.serveSessionPost(w, r, hs, msg, body, batch, written)
}

// serveSessionPost serves a legacy POST: in the session hs (looked up
// already, and in use), in the one its header names, or, for initialize,
// in a new one. written is servePost's.
func (f *Front) serveSessionPost(w http.ResponseWriter, r *http.Request, hs *httpSession, msg *jsonrpc.Message, body []byte, batch bool, written time.Time) {
	created := false
	if hs == nil {
		// Found or made here, and kept in use by this one defer: the
		// serving below, with its many ways out, is a function of its own,
		// so that every defer of both is open-coded (a stack-allocated
		// defer and its deferreturn cost more on every call).
		var status int
		var err error
		if header(r.Header, headerSession) != "" {
			hs, status, err = f.lookup(r)
		} else if batch || msg.Method != methodInitialize {
			id := jsonrpc.ID{}
			if !batch {
				id = msg.ID
			}
			jsonError(w, http.StatusBadRequest, id, errNoSession)
			return
		} else {
			hs, err = f.newSession(r, false)
			status, created = http.StatusServiceUnavailable, true
		}
		if err != nil {
			http.Error(w, err.Error(), status)
			return
		}
		hs.use(1)
		defer hs.use(-1)
	}
	f.serveInSession(w, r, hs, msg, body, batch, created, written)
}

// serveInSession is serveSessionPost once its session hs is known and in
// use; created says that this POST's initialize made it.
func (f *Front) serveInSession(w http.ResponseWriter, r *http.Request, hs *httpSession, msg *jsonrpc.Message, body []byte, batch, created bool, written time.Time) {
	w.Header()[headerSession] = hs.idHeader
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
		if batch && hs.version() != batchVersion {
			jsonError(w, http.StatusBadRequest, jsonrpc.ID{}, jsonrpc.Errorf(jsonrpc.ErrInvalidRequest, "batches are not supported in this protocol version"))
			return
		}
		if batch {
			f.serveBatch(w, r, hs, body)
			return
		}
		hs.stream.deliver(msg, nil)
		w.WriteHeader(http.StatusAccepted)
		return
	}
	sseOK := strings.Contains(header(r.Header, headerAccept), "text/event-stream")
	post, err := hs.stream.openPostWritten(msg.ID, sseOK, written)
	if err != nil {
		// Refused as the session refuses an id in use once its POST is
		// gone: an answer to the request, and a record of it.
		refusal := jsonrpc.ToWire(err)
		f.g.RecordRefused(hs.id, msg, refusal)
		jsonError(w, http.StatusOK, msg.ID, refusal)
		return
	}
	defer hs.stream.closePost(msg.ID, post)
	if !hs.stream.held.hold(msg.ID, heldCost(len(body))) {
		w.Header().Set("Retry-After", "1")
		jsonError(w, http.StatusServiceUnavailable, msg.ID, f.errBodiesHeld())
		return
	}
	final := post.serve(w, r, msg)
	if created {
		version, ok := negotiated(final.joined())
		if !ok {
			// The client has no session to use, and an unused one would
			// count against max_sessions until it expired.
			f.drop(hs)
			return
		}
		hs.setVersion(version)
	}
}

// batchHasModern reports whether a batch holds a message with the modern
// envelope: the modern era has no batches.
func batchHasModern(body []byte) bool {
	if !rawjson.MayHoldKey(body, quotedProtocolVersion) {
		return false
	}
	elems, err := rawjson.ElementsValid(body)
	if err != nil {
		return false
	}
	for _, e := range elems {
		if m, err := jsonrpc.Decode(e); err == nil && modernClaim(m) != nil {
			return true
		}
	}
	return false
}

// negotiated reads the protocol version from initialize's answer; ok is
// false when the answer is not a result.
func negotiated(answer []byte) (version string, ok bool) {
	var r struct {
		Result *struct {
			ProtocolVersion string `json:"protocolVersion"`
		} `json:"result"`
	}
	if json.Unmarshal(answer, &r) != nil || r.Result == nil {
		return "", false
	}
	return r.Result.ProtocolVersion, true
}

// serveBatch passes a batch (protocol 2025-03-26) to the session. One with
// requests waits for the array of their answers; one batch at a time.
func (f *Front) serveBatch(w http.ResponseWriter, r *http.Request, hs *httpSession, body []byte) {
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
		hs.stream.deliver(nil, body)
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
		p.closeGone()
	}()
	hs.stream.deliver(nil, body)
	p.respond(w, r)
}
