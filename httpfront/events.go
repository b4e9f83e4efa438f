package httpfront

import (
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"
)

// Writing to a client: one message, or one event of a stream, at a time,
// each within a deadline.

// clientWriter writes to a client's response, each message with its own
// write deadline, so that a client that stops reading cannot hold the
// handler, and the session's queue behind it, forever.
type clientWriter struct {
	w       http.ResponseWriter
	timeout time.Duration
	// written is the write deadline set already for the request (zero:
	// none known): a whole answer that comes soon after it (json) keeps
	// it, rather than set one almost the same again (a timer's reset).
	written time.Time
}

func newClientWriter(w http.ResponseWriter, timeout time.Duration) clientWriter {
	return clientWriter{w: w, timeout: timeout}
}

// answerDeadline sets the write deadline for a whole answer, unless the
// one set as the request came (written) is still at least 15/16 of the
// timeout away (writtenKeptPart).
func (cw clientWriter) answerDeadline() {
	// time.Until reads only the monotonic clock (written carries its
	// reading): time.Now reads the wall clock too, needed only to set a
	// new deadline.
	if !cw.written.IsZero() && time.Until(cw.written) >= cw.timeout-cw.timeout/writtenKeptPart {
		return
	}
	setWriteDeadline(cw.w, time.Now().Add(cw.timeout))
}

// writtenKeptPart: a write deadline set already is kept for a whole answer
// while no more than this part of the timeout has passed since (a 16th:
// 3.75 s of the minute), so that the answer still has at least 15/16 of
// the timeout.
const writtenKeptPart = 16

// write runs fn with the deadline set, then flushes.
func (cw clientWriter) write(fn func() error) error {
	setWriteDeadline(cw.w, time.Now().Add(cw.timeout))
	if err := fn(); err != nil {
		return err
	}
	return http.NewResponseController(cw.w).Flush()
}

// status and json write a whole answer, not flushed: net/http sends it,
// headers and body in one write, as the handler returns (within the
// deadline set here), with its length given and the connection kept for
// the next request. A flush would make it chunked, and cost a second
// write for the terminating chunk.
func (cw clientWriter) status(code int) error {
	setWriteDeadline(cw.w, time.Now().Add(cw.timeout))
	cw.w.WriteHeader(code)
	return nil
}

// json writes the answer given in parts (a big result: its envelope's
// head, the result, the closing brace) one after the other: a result of
// many megabytes is not copied into one buffer first.
func (cw clientWriter) json(code int, parts ...[]byte) error {
	cw.answerDeadline()
	size := 0
	for _, p := range parts {
		size += len(p)
	}
	h := cw.w.Header()
	h["Content-Type"] = jsonContentType
	if size > smallAnswerBytes {
		h["Content-Length"] = []string{strconv.Itoa(size)}
	}
	cw.w.WriteHeader(code)
	for _, p := range parts {
		if _, err := cw.w.Write(p); err != nil {
			return err
		}
	}
	return nil
}

// jsonContentType is the Content-Type of every JSON answer, one slice for
// all of them: net/http only reads a header's values (Header.Set would
// make a slice per answer).
var jsonContentType = []string{"application/json"}

// smallAnswerBytes is net/http's bufferBeforeChunkingSize: an answer up to
// it is still buffered whole when the handler returns, and net/http gives
// it its Content-Length then. A bigger one is given its length here, or it
// would go out chunked.
const smallAnswerBytes = 2048

func (cw clientWriter) startEvents() error {
	return cw.write(func() error {
		cw.w.Header().Set("Content-Type", "text/event-stream")
		cw.w.Header().Set("Cache-Control", "no-cache")
		// Proxies such as nginx buffer responses unless told not to, which
		// would hold an event back until the stream ends.
		cw.w.Header().Set("X-Accel-Buffering", "no")
		cw.w.WriteHeader(http.StatusOK)
		return nil
	})
}

// event writes one event carrying the message given in parts.
func (cw clientWriter) event(parts ...[]byte) error {
	return cw.write(func() error { return writeEvent(cw.w, parts) })
}

func (cw clientWriter) comment(text string) error {
	return cw.write(func() error {
		_, err := fmt.Fprintf(cw.w, ": %s\n\n", text)
		return err
	})
}

func (cw clientWriter) raw(fn func(io.Writer) error) error {
	return cw.write(func() error { return fn(cw.w) })
}

// streamOpen reports whether the session's GET stream is open.
func (st *httpStream) streamOpen() bool {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.standalone != nil
}

// sseSink is an open GET stream.
type sseSink struct {
	ch   chan []byte   // unbuffered: each message waits for the handler to take it
	done chan struct{} // closed when the GET's handler has returned
}

// keepAliveEvery is how often an idle event stream gets a comment, so that
// proxies between mcpgate and the client do not cut it.
const keepAliveEvery = 25 * time.Second

// serveStandalone serves the session's GET stream until the client leaves,
// stops reading, or the session ends. preamble, if not nil, writes first
// (the legacy endpoint event).
func (st *httpStream) serveStandalone(w http.ResponseWriter, r *http.Request, preamble func(io.Writer) error) {
	sink := &sseSink{ch: make(chan []byte), done: make(chan struct{})}
	st.mu.Lock()
	if st.standalone != nil {
		st.mu.Unlock()
		http.Error(w, "this session already has a stream open", http.StatusConflict)
		return
	}
	st.standalone = sink
	backlog := st.backlog
	st.forgetNotes()
	st.backlog, st.backlogBytes, st.requestBytes, st.oldest, st.holes = nil, 0, 0, 0, 0
	st.dropping, st.droppingReqs = false, false
	st.mu.Unlock()
	defer func() {
		st.mu.Lock()
		if st.standalone == sink {
			st.standalone = nil
		}
		st.mu.Unlock()
		close(sink.done)
	}()
	cw := newClientWriter(w, st.writeTimeout)
	if cw.startEvents() != nil {
		return
	}
	if preamble != nil && cw.raw(preamble) != nil {
		return
	}
	for i, p := range backlog {
		backlog[i] = pending{} // let what went out go
		if !p.dropped && cw.event(p.msg) != nil {
			return
		}
	}
	tick := time.NewTicker(keepAliveEvery)
	defer tick.Stop()
	for {
		select {
		case m := <-sink.ch:
			if cw.event(m) != nil {
				return
			}
		case <-tick.C:
			if cw.comment("keep-alive") != nil {
				return
			}
		case <-r.Context().Done():
			return
		case <-st.ended:
			return
		}
	}
}
