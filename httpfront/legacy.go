package httpfront

import (
	"fmt"
	"io"
	"net/http"

	"github.com/mcpgate/mcpgate/jsonrpc"
)

// The legacy HTTP+SSE transport (2024-11-05): GET /sse opens the stream and
// announces where to POST; every message to the client, answers included,
// goes on that stream.

func (f *Front) serveLegacyStream(w http.ResponseWriter, r *http.Request) {
	hs, err := f.newSession(r, true)
	if err != nil {
		http.Error(w, err.Error(), http.StatusServiceUnavailable)
		return
	}
	hs.use(1)
	defer func() {
		hs.use(-1)
		f.mu.Lock()
		delete(f.sessions, hs.id)
		f.mu.Unlock()
		hs.stream.end() // the stream is the session: when it goes, so does the session
	}()
	endpoint := "/messages?sessionId=" + hs.id
	hs.stream.serveStandalone(w, r, func(w io.Writer) error {
		_, err := fmt.Fprintf(w, "event: endpoint\ndata: %s\n\n", endpoint)
		return err
	})
}

func (f *Front) serveLegacyPost(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	hs := f.sessions[r.URL.Query().Get("sessionId")]
	f.mu.Unlock()
	if hs == nil || !hs.stream.legacy || hs.client != f.clientOf(r) {
		http.Error(w, "unknown session: open GET /sse first", http.StatusNotFound)
		return
	}
	body, ok := f.readBody(w, r)
	if !ok {
		return
	}
	m, err := jsonrpc.DecodeBody(body)
	if err != nil {
		m = nil // the session answers it, on the stream, as it would anything
	}
	if f.closing() && m != nil && m.IsRequest() {
		jsonError(w, http.StatusServiceUnavailable, m.ID, errShuttingDown)
		return
	}
	hs.use(1)
	defer hs.use(-1)
	if m != nil {
		hs.stream.deliver(m, nil)
	} else {
		hs.stream.deliver(nil, body)
	}
	w.WriteHeader(http.StatusAccepted)
	io.WriteString(w, "Accepted")
}
