package proxy

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpgate/mcpgate/jsonrpc"
)

// httpStream is one HTTP session seen as a jsonrpc.Stream: Read returns what
// the client POSTs; a message related to an open POST goes back on it, and
// everything else goes on the session's GET stream (held in a bounded
// backlog while none is open).
type httpStream struct {
	id     string // the session's Mcp-Session-Id
	legacy bool   // HTTP+SSE: everything goes on the GET stream, answers too

	inbox   chan []byte   // messages the client POSTed, for the connection's reader
	ended   chan struct{} // closed when the session ends
	endOnce sync.Once
	deleted atomic.Bool // the client ended the session: its requests are abandoned at once

	mu         sync.Mutex
	posts      map[jsonrpc.ID]*postWaiter // open POSTs, by the id of their request
	batch      *postWaiter                // the open POST of a batch, if any
	standalone *sseSink                   // the open GET stream, if any
	backlog    [][]byte                   // for the GET stream while none is open
}

func newHTTPStream(id string, legacy bool) *httpStream {
	return &httpStream{id: id, legacy: legacy, inbox: make(chan []byte), ended: make(chan struct{}), posts: map[jsonrpc.ID]*postWaiter{}}
}

func (st *httpStream) Read() ([]byte, error) {
	select {
	case m := <-st.inbox:
		return m, nil
	case <-st.ended:
		return nil, io.EOF
	}
}

// deliver hands a POSTed message to the session's reader.
func (st *httpStream) deliver(msg []byte) {
	select {
	case st.inbox <- msg:
	case <-st.ended:
	}
}

// Write sends a message that belongs to no request: on the GET stream.
func (st *httpStream) Write(msg []byte) error {
	st.mu.Lock()
	if b := st.batch; b != nil && len(msg) > 0 && msg[0] == '[' {
		st.mu.Unlock()
		b.send(msg, true)
		return nil
	}
	sink := st.standalone
	if sink == nil {
		st.keep(msg)
		st.mu.Unlock()
		return nil
	}
	st.mu.Unlock()
	select {
	case sink.ch <- msg:
	case <-sink.done:
		st.mu.Lock()
		st.keep(msg)
		st.mu.Unlock()
	case <-st.ended:
		return jsonrpc.ErrClosed
	}
	return nil
}

// keep holds a message for the next GET stream, dropping the oldest past
// the bound. st.mu held.
func (st *httpStream) keep(msg []byte) {
	if len(st.backlog) >= backlogLimit {
		st.backlog = st.backlog[1:]
	}
	st.backlog = append(st.backlog, msg)
}

// WriteRelated sends a message on the POST of request related when it is
// still open (and, before the answer, when the client accepts SSE). An
// answer whose POST is gone is dropped: a response must not go on the GET
// stream. Anything else falls back to the GET stream.
func (st *httpStream) WriteRelated(msg []byte, related jsonrpc.ID, final bool) error {
	if st.legacy {
		return st.Write(msg)
	}
	st.mu.Lock()
	p := st.posts[related]
	st.mu.Unlock()
	if p != nil && p.send(msg, final) {
		return nil
	}
	if final || msg == nil {
		return nil
	}
	return st.Write(msg)
}

func (st *httpStream) Close() error {
	st.end()
	return nil
}

func (st *httpStream) abandoned() bool { return st.deleted.Load() }

func (st *httpStream) sessionID() string { return st.id }

// end ends the session: its reader sees EOF and its streams finish.
func (st *httpStream) end() {
	st.endOnce.Do(func() { close(st.ended) })
}

func (st *httpStream) openPost(id jsonrpc.ID, sse bool) (*postWaiter, error) {
	p := &postWaiter{st: st, ch: make(chan postMsg, 16), sse: sse, gone: make(chan struct{})}
	st.mu.Lock()
	defer st.mu.Unlock()
	if _, dup := st.posts[id]; dup {
		return nil, jsonrpc.Errorf(jsonrpc.ErrInvalidRequest, "request id %s is already in use by a request in flight", id)
	}
	st.posts[id] = p
	return p, nil
}

func (st *httpStream) closePost(id jsonrpc.ID, p *postWaiter) {
	st.mu.Lock()
	if st.posts[id] == p {
		delete(st.posts, id)
	}
	st.mu.Unlock()
	close(p.gone)
}

// postWaiter is one open POST waiting for its answer.
type postWaiter struct {
	st   *httpStream
	ch   chan postMsg
	sse  bool          // the client accepts an event stream
	gone chan struct{} // closed when the POST's handler has returned
}

type postMsg struct {
	msg   []byte
	final bool
}

// send passes a message to the POST; false if it cannot take it.
func (p *postWaiter) send(msg []byte, final bool) bool {
	if !final && !p.sse {
		return false
	}
	select {
	case p.ch <- postMsg{msg, final}:
		return true
	case <-p.gone:
		return false
	}
}

// respond writes the POST's answer: plain JSON when the answer comes first,
// else an event stream carrying what comes before it, then the answer. It
// returns the answer, nil when none was written.
func (p *postWaiter) respond(w http.ResponseWriter, r *http.Request) (answer []byte) {
	streaming := false
	write := func(m postMsg) bool {
		if m.msg == nil { // cancelled by the client: no answer comes
			if !streaming {
				w.WriteHeader(http.StatusAccepted)
			}
			return true
		}
		if m.final {
			answer = m.msg
		}
		if !streaming && m.final {
			w.Header().Set("Content-Type", "application/json")
			w.Write(m.msg)
			return true
		}
		if !streaming {
			streaming = true
			startSSE(w)
		}
		writeSSE(w, "", m.msg)
		flush(w)
		return m.final
	}
	for {
		select {
		case m := <-p.ch:
			if write(m) {
				return answer
			}
		case <-r.Context().Done():
			return nil // the client went away; it may still get its answer no other way
		case <-p.st.ended:
			for { // what was sent before the end still goes out
				select {
				case m := <-p.ch:
					if write(m) {
						return answer
					}
					continue
				default:
				}
				break
			}
			if !streaming {
				jsonError(w, http.StatusServiceUnavailable, jsonrpc.ID{}, errors.New("the session ended before the answer"))
			}
			return nil
		}
	}
}

func startSSE(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	flush(w)
}

func flush(w http.ResponseWriter) {
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
}

// sseSink is an open GET stream.
type sseSink struct {
	ch   chan []byte
	done chan struct{} // closed when the GET's handler has returned
}

// keepAlive is how often an idle event stream gets a comment, so that
// proxies between mcpgate and the client do not cut it.
const keepAlive = 25 * time.Second

// serveStandalone serves the session's GET stream until the client leaves
// or the session ends. preamble, if not nil, writes first (the legacy
// endpoint event).
func (st *httpStream) serveStandalone(w http.ResponseWriter, r *http.Request, preamble func(io.Writer) error) {
	sink := &sseSink{ch: make(chan []byte, 64), done: make(chan struct{})}
	st.mu.Lock()
	if st.standalone != nil {
		st.mu.Unlock()
		http.Error(w, "this session already has a stream open", http.StatusConflict)
		return
	}
	st.standalone = sink
	backlog := st.backlog
	st.backlog = nil
	st.mu.Unlock()
	defer func() {
		st.mu.Lock()
		if st.standalone == sink {
			st.standalone = nil
		}
		st.mu.Unlock()
		close(sink.done)
	}()
	startSSE(w)
	if preamble != nil {
		if err := preamble(w); err != nil {
			return
		}
		flush(w)
	}
	for _, m := range backlog {
		if writeSSE(w, "", m) != nil {
			return
		}
	}
	flush(w)
	tick := time.NewTicker(keepAlive)
	defer tick.Stop()
	for {
		select {
		case m := <-sink.ch:
			if writeSSE(w, "", m) != nil {
				return
			}
			flush(w)
		case <-tick.C:
			if _, err := fmt.Fprint(w, ": keep-alive\n\n"); err != nil {
				return
			}
			flush(w)
		case <-r.Context().Done():
			return
		case <-st.ended:
			for {
				select {
				case m := <-sink.ch:
					writeSSE(w, "", m)
					continue
				default:
				}
				flush(w)
				return
			}
		}
	}
}
