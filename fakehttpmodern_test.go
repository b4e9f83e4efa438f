package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/mcpgate/mcpgate/jsonrpc"
)

// fakeupstream -http in the modern era (spec2026.md §6): every request is
// a POST of its own, no session; the headers that mirror the body are
// checked as the spec's table says, in this order: envelope (-32602);
// MCP-Protocol-Version, Mcp-Method, Mcp-Name, Mcp-Param-* (-32020); version
// served (-32022, after the header so that a header that disagrees with
// the envelope is -32020 whatever the version); method known (404,
// -32601). Those
// answer 400 (404) with a JSON-RPC error; an error of the request's own
// (unknown tool, bad requestState) answers 200, as the TypeScript SDK
// does, except a missing client capability (-32021, 400). An answer is
// JSON, or an event stream once a notification (progress, log, a listen
// stream's) goes before it.

// mcpHeaderLog is the log line of a POST's Mcp-* headers, so that scripts
// can check what a client sent: "headers {JSON}".
func mcpHeaderLog(r *http.Request) string {
	h := map[string]string{}
	for k, v := range r.Header {
		if strings.HasPrefix(strings.ToLower(k), "mcp-") {
			h[k] = strings.Join(v, ", ")
		}
	}
	return "headers " + string(mustMarshal(h))
}

// serveModern handles a POST to a modern or dual fake. It reports false
// for what the legacy path serves (dual: a request with no envelope).
func (h *fakeHTTP) serveModern(w http.ResponseWriter, r *http.Request, msg *jsonrpc.Message) bool {
	claimed := msg.IsRequest() && modernClaim(msg.Params)
	headerVersion := r.Header.Get("Mcp-Protocol-Version")
	switch {
	case claimed:
		h.modernRequest(w, r, msg)
	case msg.IsRequest() && isModernVersion(headerVersion):
		writeHTTPError(w, http.StatusBadRequest, msg.ID, jsonrpc.Errorf(jsonrpc.ErrInvalidParams,
			"%s: MCP-Protocol-Version says %s but params._meta has no %s and %s", msg.Method, headerVersion, metaProtocolVersion, metaClientCaps))
	case h.f.era() == eraDual:
		return false
	case msg.IsRequest():
		writeHTTPError(w, http.StatusBadRequest, msg.ID, h.f.refuseLegacy(msg))
	case msg.IsNotification():
		// Closing a stream is how a 2026-07-28 client cancels; a
		// notification is accepted and changes nothing.
		w.WriteHeader(http.StatusAccepted)
	default:
		writeHTTPError(w, http.StatusBadRequest, msg.ID, jsonrpc.Errorf(jsonrpc.ErrInvalidRequest,
			"a response, but a %s server sends the client no requests", modernVersion))
	}
	return true
}

// modernRequest checks and serves a request that carries the envelope.
func (h *fakeHTTP) modernRequest(w http.ResponseWriter, r *http.Request, msg *jsonrpc.Message) {
	env, err := parseEnvelope(msg.Method, msg.Params)
	if err != nil {
		writeHTTPError(w, http.StatusBadRequest, msg.ID, err)
		return
	}
	if err := checkHeaders(r, msg, env.version, h.f.toolSchema); err != nil {
		writeHTTPError(w, http.StatusBadRequest, msg.ID, err)
		return
	}
	if err := h.f.checkModern(msg, env); err != nil {
		status := http.StatusBadRequest
		if errors.Is(err, jsonrpc.ErrMethodNotFound) {
			status = http.StatusNotFound
		}
		writeHTTPError(w, status, msg.ID, err)
		return
	}
	reply := &fakeReply{w: w, rc: http.NewResponseController(w)}
	res, err := h.f.dispatchModern(withSender(r.Context(), reply.notify), msg, env)
	if r.Context().Err() != nil {
		h.log("client closed the stream of id " + msg.ID.String())
		reply.finish(nil, 0)
		return
	}
	answer := &jsonrpc.Message{ID: msg.ID, Result: res}
	status := http.StatusOK
	if err != nil {
		answer = &jsonrpc.Message{ID: msg.ID, Error: jsonrpc.ToWire(err)}
		if errors.Is(err, errMissingCapability) {
			status = http.StatusBadRequest
		}
	}
	reply.finish(answer, status)
}

// checkHeaders checks the headers that mirror a modern request's body
// (spec2026.md §6.2, §6.3, §6.6); every failure is -32020.
func checkHeaders(r *http.Request, msg *jsonrpc.Message, version string, toolSchema func(string) json.RawMessage) error {
	mismatch := func(format string, args ...any) error {
		return &jsonrpc.Error{Code: errHeaderMismatch.Code, Message: "Header mismatch: " + fmt.Sprintf(format, args...)}
	}
	switch hv := r.Header.Values("Mcp-Protocol-Version"); {
	case len(hv) == 0:
		return mismatch("MCP-Protocol-Version header missing; it must repeat params._meta[%q] (%s)", metaProtocolVersion, version)
	case hv[0] != version:
		return mismatch("MCP-Protocol-Version header %q does not match params._meta[%q] %q", hv[0], metaProtocolVersion, version)
	}
	switch hm := r.Header.Values("Mcp-Method"); {
	case len(hm) == 0:
		return mismatch("Mcp-Method header missing; it must repeat the method (%s)", msg.Method)
	case hm[0] != msg.Method:
		return mismatch("Mcp-Method header %q does not match the method %q", hm[0], msg.Method)
	}
	var p map[string]json.RawMessage
	json.Unmarshal(msg.Params, &p)
	if field, ok := nameHeaderSource[msg.Method]; ok {
		var want string
		json.Unmarshal(p[field], &want)
		hn := r.Header.Values("Mcp-Name")
		if len(hn) == 0 {
			return mismatch("Mcp-Name header missing; for %s it must repeat params.%s (%q)", msg.Method, field, want)
		}
		got, ok := decodeHeaderValue(hn[0])
		if !ok {
			return mismatch("Mcp-Name header %q is not valid =?base64?…?=", hn[0])
		}
		if got != want {
			return mismatch("Mcp-Name header value %q does not match params.%s %q", got, field, want)
		}
	}
	if msg.Method != "tools/call" {
		return nil
	}
	var name string
	json.Unmarshal(p["name"], &name)
	for _, hp := range headerParams(toolSchema(name)) {
		header := "Mcp-Param-" + hp.name
		arg := "arguments." + strings.Join(hp.path, ".")
		value := argumentAt(p["arguments"], hp.path)
		got := r.Header.Values(header)
		switch {
		case value == nil && len(got) > 0:
			return mismatch("%s header sent, but %s is absent or null", header, arg)
		case value == nil:
		case len(got) == 0:
			return mismatch("%s header missing; tool %s mirrors %s (%s) into it", header, name, arg, value)
		case !paramHeaderMatches(got[0], value):
			return mismatch("%s header %q does not match %s %s", header, got[0], arg, value)
		}
	}
	return nil
}

// toolSchema is a listed tool's inputSchema (nil for an unknown tool).
func (f *fake) toolSchema(name string) json.RawMessage {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, t := range f.spec.Tools {
		var s struct {
			Name        string          `json:"name"`
			InputSchema json.RawMessage `json:"inputSchema"`
		}
		json.Unmarshal(t.Raw, &s)
		if s.Name == name {
			return s.InputSchema
		}
	}
	return nil
}

func writeHTTPError(w http.ResponseWriter, status int, id jsonrpc.ID, err error) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write((&jsonrpc.Message{ID: id, Error: jsonrpc.ToWire(err)}).Encode())
}

// fakeReply is a modern request's answer: JSON, unless a notification
// comes first and makes it an event stream. Notifications may come from
// other requests' goroutines (a listen stream's), so writes take mu; none
// is written once the answer is (done).
type fakeReply struct {
	w  http.ResponseWriter
	rc *http.ResponseController

	mu   sync.Mutex
	sse  bool // the event stream has begun
	done bool
}

// replyWriteLimit bounds each write: a client that stops reading a stream
// holds up whoever sends on it for that long, not for ever.
const replyWriteLimit = 10 * time.Second

func (r *fakeReply) notify(method string, params json.RawMessage) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.done {
		return
	}
	r.event((&jsonrpc.Message{Method: method, Params: params}).Encode())
}

// event writes one event, beginning the stream if need be. r.mu held.
func (r *fakeReply) event(msg []byte) {
	if !r.sse {
		r.sse = true
		r.w.Header().Set("Content-Type", "text/event-stream")
		r.w.Header().Set("Cache-Control", "no-cache")
		r.w.Header().Set("X-Accel-Buffering", "no")
		r.w.WriteHeader(http.StatusOK)
	}
	r.rc.SetWriteDeadline(time.Now().Add(replyWriteLimit))
	fmt.Fprintf(r.w, "event: message\ndata: %s\n\n", msg)
	r.rc.Flush()
}

// finish writes the answer (nil: none, the client has gone) with status
// when it is still JSON; nothing is written after it.
func (r *fakeReply) finish(answer *jsonrpc.Message, status int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.done = true
	switch {
	case answer == nil:
	case r.sse:
		r.event(answer.Encode())
	default:
		r.w.Header().Set("Content-Type", "application/json")
		r.w.WriteHeader(status)
		r.w.Write(answer.Encode())
	}
}
