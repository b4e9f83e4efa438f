package proxy

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/http/httptrace"
	"time"

	"github.com/mcpgate/mcpgate/internal/sse"

	"github.com/mcpgate/mcpgate/jsonrpc"
)

// The Streamable HTTP transport seen from the client side (2025-03-26 and
// later): each message in its own POST, answered with JSON or an event
// stream; a GET stream for what the server sends on its own; a session
// started again when the server forgets it.

// send POSTs one message and routes the answer. retry allows one new
// session when the server says it no longer knows ours. ctx ends the
// message's HTTP work.
func (l *httpLink) send(ctx context.Context, msg []byte, m *jsonrpc.Message, retry bool) {
	l.mu.Lock()
	legacy := l.legacy
	l.mu.Unlock()
	if legacy {
		l.sendLegacy(ctx, msg, m)
		return
	}
	session := ""
	if m.Method != methodInitialize {
		var ok bool
		if session, ok = l.currentSession(ctx); !ok {
			return // given up while a new session was being started
		}
	}
	if m.Method == notifyInitialized {
		// The GET stream opens as soon as the server has read initialized,
		// not once it answered: requests wait for that stream (awaitStream),
		// and a slow 202 must not hold them up.
		ctx = httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{
			WroteRequest: func(w httptrace.WroteRequestInfo) {
				if w.Err == nil {
					l.openStream()
				}
			},
		})
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, l.url, bytes.NewReader(msg))
	if err != nil {
		l.failRequest(m, "%v", err)
		return
	}
	l.setHeaders(req, session)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err, retried := l.post(req, m.Method)
	if err != nil {
		if ctx.Err() != nil {
			return
		}
		// Unreachable: the link ends, so this request and every other one
		// pending fail with the reason, and the supervisor retries.
		l.markGone(fmt.Sprintf("cannot reach %s: %v", l.shown, unwrapURLError(err)))
		return
	}
	defer resp.Body.Close()
	if m.Method == methodInitialize && resp.StatusCode == http.StatusOK {
		l.mu.Lock()
		l.session = resp.Header.Get(headerSession)
		l.mu.Unlock()
	}
	switch {
	case resp.StatusCode == http.StatusAccepted || resp.StatusCode == http.StatusNoContent:
		if m.IsRequest() {
			l.failRequest(m, "the server accepted %s without answering it", m.Method)
		}
		if m.Method == notifyInitialized {
			l.openStream()
		}
	case resp.StatusCode == http.StatusOK:
		l.readAnswer(ctx, resp, m)
	case resp.StatusCode == http.StatusNotFound && session != "" && m.Method != methodInitialize && retry:
		// The server restarted or expired our session: start a new one and
		// try once more, so the client's own session goes on. This
		// connection is given back first: the retry may need it.
		io.Copy(io.Discard, io.LimitReader(resp.Body, 4096))
		resp.Body.Close()
		if err := l.renewSession(ctx, session); err != nil {
			if ctx.Err() == nil {
				l.failRequest(m, "its session expired and a new one could not be started: %v", err)
			}
			return
		}
		l.send(ctx, msg, m, false)
	case m.Method == methodInitialize && (resp.StatusCode == 400 || resp.StatusCode == 404 || resp.StatusCode == 405) && !isJSONRPC(resp):
		// A server of the older HTTP+SSE transport: it has no POST here.
		l.log.Info("upstream does not take Streamable HTTP; trying the older HTTP+SSE transport", "status", resp.StatusCode)
		l.mu.Lock()
		l.legacy = true
		l.mu.Unlock()
		l.sendLegacy(ctx, msg, m)
	default:
		l.failRequest(m, "HTTP %s: %s%s", resp.Status, l.errorBody(resp.Body), retried)
	}
}

func isJSONRPC(resp *http.Response) bool {
	mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	return mt == "application/json"
}

// readAnswer routes a POST's 200 answer: one JSON message, or an event
// stream of messages ending with the answer.
func (l *httpLink) readAnswer(ctx context.Context, resp *http.Response, m *jsonrpc.Message) {
	mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	switch mt {
	case "application/json":
		body, err := io.ReadAll(io.LimitReader(resp.Body, int64(l.max)+1))
		if err != nil || len(body) > l.max {
			l.failRequest(m, "the answer was unreadable or over %d bytes", l.max)
			return
		}
		l.noteProtocol(m, body)
		l.push(body)
	case "text/event-stream":
		pos := streamPos{retry: -1}
		if l.readEvents(resp.Body, m, &pos, false) || !m.IsRequest() || ctx.Err() != nil {
			return
		}
		if pos.lastID == "" {
			l.failRequest(m, "its event stream for %s ended without an answer%s", m.Method, pos.noAnswerWhy(l.max))
			return
		}
		// The server closed the connection, not the stream: the answer is
		// to be had by resuming the stream.
		if why := l.resume(ctx, m, &pos); why != "" && ctx.Err() == nil {
			l.failRequest(m, "its event stream for %s ended without an answer, and resuming it failed: %s%s", m.Method, why, pos.noAnswerWhy(l.max))
		}
	default:
		l.failRequest(m, "unexpected Content-Type %q", resp.Header.Get("Content-Type"))
	}
}

// readEvents passes every message event of a stream on, and reports whether
// the answer to m was among them. pos is where the stream stands; it is
// read first (a resumed stream goes on from it) and kept up to date.
// stopAtAnswer ends the reading at the answer, for a resumed stream the
// server may leave open.
func (l *httpLink) readEvents(body io.Reader, m *jsonrpc.Message, pos *streamPos, stopAtAnswer bool) bool {
	sr := sse.NewReader(body, l.max)
	sr.LastID, sr.Retry = pos.lastID, pos.retry
	defer func() { pos.lastID, pos.retry = sr.LastID, sr.Retry }()
	answered := false
	for {
		ev, err := sr.Next()
		if errors.Is(err, sse.ErrEventTooLarge) {
			l.log.Warn("skipped an over-size event from upstream", "limit", l.max)
			pos.skipped++
			continue
		}
		if err != nil {
			return answered
		}
		pos.events++
		if ev.Type != "message" || len(bytes.TrimSpace(ev.Data)) == 0 {
			continue
		}
		d, err := jsonrpc.Decode(ev.Data)
		isAnswer := false
		if err == nil {
			switch {
			case d.IsResponse() && m != nil && m.IsRequest() && d.ID.SameValue(m.ID): // by value, as the Conn matches it
				isAnswer = true
				l.noteProtocol(m, ev.Data)
			case d.IsResponse():
				// Answered elsewhere (a server may resume one stream on
				// another): the request's own stream need not be waited for.
				l.mu.Lock()
				l.endRequestLocked(d.ID.ValueKey())
				l.mu.Unlock()
			case d.IsRequest() && m != nil && m.IsRequest():
				l.relate(d.ID, m.ID)
			}
		}
		l.push(ev.Data)
		if isAnswer {
			answered = true
			if stopAtAnswer {
				return true
			}
		}
	}
}

// maxRelated bounds the server requests remembered; an unanswered one is
// forgotten first come, first gone.
const maxRelated = 1024

// relate remembers that the server's request came on the answer stream of
// our request ours: the client request behind ours is the one to ask.
func (l *httpLink) relate(serverReq, ours jsonrpc.ID) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.related == nil || len(l.related) >= maxRelated {
		l.related = map[jsonrpc.ID]jsonrpc.ID{}
	}
	l.related[serverReq] = ours
}

// relatedTo returns the request of ours a server request came with.
func (l *httpLink) relatedTo(serverReq jsonrpc.ID) (jsonrpc.ID, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	id, ok := l.related[serverReq]
	return id, ok
}

// noteProtocol keeps the protocol version the server answered initialize
// with, for the MCP-Protocol-Version header of every later request.
func (l *httpLink) noteProtocol(m *jsonrpc.Message, answer []byte) {
	if m.Method != methodInitialize {
		return
	}
	var r struct {
		Result struct {
			ProtocolVersion string `json:"protocolVersion"`
		} `json:"result"`
	}
	if json.Unmarshal(answer, &r) == nil && r.Result.ProtocolVersion != "" {
		l.mu.Lock()
		l.protocol = r.Result.ProtocolVersion
		l.mu.Unlock()
	}
}

// openStream opens the GET stream for what the server sends on its own, if
// it offers one (405 means it does not), and keeps it open: when the server
// closes it, it is reopened after the server's retry time (else with
// backoff), from the last event id seen.
func (l *httpLink) openStream() {
	l.mu.Lock()
	if l.getOpen {
		l.mu.Unlock()
		return
	}
	l.getOpen = true
	if l.ctx.Err() != nil {
		l.mu.Unlock()
		return
	}
	l.work.Add(1)
	l.mu.Unlock()
	go func() {
		defer l.work.Done()
		defer l.openGate() // no stream to wait for
		pos, posSession := streamPos{retry: -1}, ""
		for failures := 0; l.ctx.Err() == nil; {
			session, ok := l.currentSession(l.ctx)
			if !ok {
				return
			}
			if session != posSession { // event ids belong to a session
				pos, posSession = streamPos{retry: -1}, session
			}
			req, _ := http.NewRequestWithContext(l.ctx, http.MethodGet, l.url, nil)
			l.setHeaders(req, session)
			req.Header.Set("Accept", "text/event-stream")
			if pos.lastID != "" {
				req.Header.Set(headerLastEventID, pos.lastID)
			}
			resp, err := l.client.Do(req)
			l.openGate() // open, refused or failed: waiting longer brings nothing
			wait := time.Duration(-1)
			if err == nil {
				if resp.StatusCode == http.StatusMethodNotAllowed {
					resp.Body.Close()
					return // no stream offered
				}
				if resp.StatusCode == http.StatusOK {
					before := pos.events
					l.readEvents(resp.Body, nil, &pos, false)
					if pos.events > before { // a stream that brings nothing is a failure
						failures = 0
						wait = retryWait(pos)
					}
				}
				resp.Body.Close()
			}
			if wait < 0 {
				failures++
				wait = max(retryWait(pos), backoff(min(failures, 5), 30*time.Second))
			}
			select {
			case <-time.After(wait):
			case <-l.streamKick:
			case <-l.ctx.Done():
			}
		}
	}()
}

// awaitStream waits (bounded by ctx and streamOpenWait) until the server has
// answered the GET for its stream. A server sends requests that it ties to
// no request of ours on that stream, elicitation during a tool call among
// them, and drops them while none is open (the TypeScript SDK does): a
// request sent before the stream is open could lose the very request it
// causes. The handshake itself does not wait: the stream opens after it.
func (l *httpLink) awaitStream(ctx context.Context) {
	l.mu.Lock()
	up := l.streamUp
	l.mu.Unlock()
	select {
	case <-up:
		return
	default:
	}
	timer := time.NewTimer(streamOpenWait)
	defer timer.Stop()
	select {
	case <-up:
	case <-ctx.Done():
	case <-timer.C:
		if l.openGate() {
			l.log.Warn("upstream did not answer the GET for its event stream in time; sending anyway, and what it sends on its own before the stream opens may be lost", "waited", streamOpenWait)
		}
	}
}

// openGate lets messages go (see awaitStream), and reports whether they
// were still waiting.
func (l *httpLink) openGate() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.streamSet {
		return false
	}
	l.streamSet = true
	close(l.streamUp)
	return true
}
