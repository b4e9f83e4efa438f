package httpfront

import (
	"encoding/json"
	"net/http"
	"strings"

	"github.com/mcpgate/mcpgate/jsonrpc"
)

func (f *Front) serveMCP(w http.ResponseWriter, r *http.Request) {
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

func (f *Front) servePost(w http.ResponseWriter, r *http.Request) {
	var hs *httpSession
	if r.Header.Get(headerSession) != "" {
		// Before the body: a POST to an unknown session costs no read.
		var status int
		var err error
		if hs, status, err = f.lookup(r); err != nil {
			http.Error(w, err.Error(), status)
			return
		}
		hs.use(1)
		defer hs.use(-1)
	}
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
	created := hs == nil
	if created {
		var status int
		if hs, status, err = f.initSession(msg); err != nil {
			http.Error(w, err.Error(), status)
			return
		}
		hs.use(1)
		defer hs.use(-1)
	}
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
	sseOK := strings.Contains(r.Header.Get("Accept"), "text/event-stream")
	post, err := hs.stream.openPost(msg.ID, sseOK)
	if err != nil {
		jsonError(w, http.StatusBadRequest, msg.ID, err)
		return
	}
	defer hs.stream.closePost(msg.ID, post)
	hs.stream.deliver(msg, nil)
	final := post.respond(w, r)
	if created {
		version, ok := negotiated(final)
		if !ok {
			// The client has no session to use, and an unused one would
			// count against max_sessions until it expired.
			f.drop(hs)
			return
		}
		hs.setVersion(version)
	}
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
		close(p.gone)
	}()
	hs.stream.deliver(nil, body)
	p.respond(w, r)
}
