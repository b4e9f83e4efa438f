package proxy

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpgate/mcpgate/config"
	"github.com/mcpgate/mcpgate/jsonrpc"
)

// httpLink reaches a remote MCP server over Streamable HTTP (or, for
// "type": "sse" and servers that refuse a POST at connect time, the older
// HTTP+SSE transport). As a jsonrpc.Stream it turns each Write into a POST
// and everything the server sends, in POST answers and on its GET stream,
// into Reads.
type httpLink struct {
	name    string
	url     string
	shown   string // url without credentials or query, for messages: they must not echo secrets
	headers map[string]string
	client  *http.Client
	max     int
	version string
	log     *slog.Logger

	ctx    context.Context // ends every request of the link
	cancel context.CancelFunc
	inbox  chan []byte
	work   sync.WaitGroup // POSTs, event streams
	goneCh chan struct{}
	goneMu sync.Once

	mu         sync.Mutex
	session    string          // Mcp-Session-Id the server issued
	protocol   string          // negotiated version, for MCP-Protocol-Version
	initParams json.RawMessage // to initialize again when the server forgets the session
	legacy     bool            // HTTP+SSE: POST to endpoint, everything comes on the stream
	endpoint   string          // where the legacy transport POSTs
	legacyUp   chan struct{}   // closed once the legacy stream announced its endpoint
	getOpen    bool
	lastErr    string
	related    map[jsonrpc.ID]jsonrpc.ID         // a server request → our request on whose answer stream it came
	inflight   map[jsonrpc.ID]context.CancelFunc // our requests still awaiting an answer; ends each one's HTTP work
	streamUp   chan struct{}                     // closed once messages may go: see awaitStream
	streamSet  bool                              // streamUp is closed
	reinits    atomic.Int64
	onReinit   func()        // told after a new session replaced a forgotten one
	streamKick chan struct{} // 1-buffered: the GET stream should reconnect now (a new session)
}

func newHTTPLink(s config.Server, maxMessage int, version string, log *slog.Logger) *httpLink {
	ctx, cancel := context.WithCancel(context.Background())
	if maxMessage <= 0 {
		maxMessage = jsonrpc.DefaultMaxMessage
	}
	l := &httpLink{
		name: s.Name, url: s.URL, shown: redactURL(s.URL), headers: s.Headers, max: maxMessage, version: version, log: log,
		ctx: ctx, cancel: cancel,
		inbox:      make(chan []byte, 64),
		streamKick: make(chan struct{}, 1),
		streamUp:   make(chan struct{}),
		goneCh:     make(chan struct{}),
		legacy:     s.Type == config.TypeSSE,
		inflight:   map[jsonrpc.ID]context.CancelFunc{},
	}
	// No overall timeout: event streams are long-lived. Requests are
	// bounded by the gateway's per-request deadlines instead (see Write).
	l.client = &http.Client{CheckRedirect: l.checkRedirect}
	return l
}

func (l *httpLink) Read() ([]byte, error) {
	select {
	case m := <-l.inbox:
		return m, nil
	case <-l.ctx.Done():
		return nil, io.EOF
	}
}

// Write sends one message in its own POST and returns at once: a POST
// answered only when a long tool finishes must not hold up the caller,
// whose deadline covers the wait for the answer instead.
func (l *httpLink) Write(_ context.Context, msg []byte) error {
	if l.ctx.Err() != nil {
		return jsonrpc.ErrClosed
	}
	m, err := jsonrpc.Decode(msg)
	if err != nil {
		return err
	}
	l.mu.Lock()
	if m.Method == methodInitialize {
		l.initParams = m.Params
	}
	if m.IsResponse() {
		delete(l.related, m.ID) // answered: the server's request is done
	}
	if m.Method == notifyCancelled {
		l.endRequestLocked(cancelledID(m.Params))
	}
	if l.ctx.Err() != nil {
		l.mu.Unlock()
		return jsonrpc.ErrClosed
	}
	// A request's HTTP work (its POST, its stream, resuming it) ends when the
	// gateway gives up on it: it then sends notifications/cancelled, which
	// ends this context; so does its answer coming on another stream.
	ctx := l.ctx
	if m.IsRequest() {
		ctx, l.inflight[m.ID] = context.WithCancel(l.ctx)
	}
	l.work.Add(1) // under l.mu: ordered before stop's Wait (see end)
	l.mu.Unlock()
	go func() {
		defer l.work.Done()
		defer l.endRequest(m.ID, m.IsRequest())
		if m.Method != methodInitialize && m.Method != notifyInitialized && !m.IsResponse() {
			l.awaitStream(ctx)
		}
		l.send(ctx, msg, m, true)
	}()
	return nil
}

// endRequest forgets a request of ours whose HTTP work is over.
func (l *httpLink) endRequest(id jsonrpc.ID, isRequest bool) {
	if !isRequest {
		return
	}
	l.mu.Lock()
	l.endRequestLocked(id)
	l.mu.Unlock()
}

// endRequestLocked ends the HTTP work of our request id, if it has any.
// l.mu held.
func (l *httpLink) endRequestLocked(id jsonrpc.ID) {
	if done, ok := l.inflight[id]; ok {
		done()
		delete(l.inflight, id)
	}
}

// cancelledID reads the request id from notifications/cancelled params.
func cancelledID(params json.RawMessage) jsonrpc.ID {
	var p struct {
		RequestID jsonrpc.ID `json:"requestId"`
	}
	json.Unmarshal(params, &p)
	return p.RequestID
}

func (l *httpLink) Close() error {
	l.end()
	return nil
}

// end cancels every request of the link. Work is added only under l.mu and
// while the link lives, so after end nothing new starts that stop would
// have to wait for.
func (l *httpLink) end() {
	l.mu.Lock()
	l.cancel()
	l.mu.Unlock()
}

func (l *httpLink) gone() <-chan struct{} { return l.goneCh }

func (l *httpLink) reason(time.Duration) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.lastErr == "" {
		return "its connection closed"
	}
	return l.lastErr
}

// stop ends the session on the server (DELETE) and every request.
func (l *httpLink) stop(grace time.Duration) {
	l.mu.Lock()
	session, legacy := l.session, l.legacy
	l.mu.Unlock()
	if session != "" && !legacy {
		ctx, cancel := context.WithTimeout(context.Background(), grace)
		req, err := http.NewRequestWithContext(ctx, http.MethodDelete, l.url, nil)
		if err == nil {
			l.setHeaders(req, session)
			if resp, err := l.client.Do(req); err == nil {
				resp.Body.Close()
			}
		}
		cancel()
	}
	l.end()
	done := make(chan struct{})
	go func() { l.work.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(grace):
	}
}

// markGone records why the server cannot be reached and ends the link, so
// that every pending call fails with that reason and the supervisor retries.
func (l *httpLink) markGone(reason string) {
	l.mu.Lock()
	l.lastErr = reason
	l.mu.Unlock()
	l.goneMu.Do(func() { close(l.goneCh) })
	l.end()
}

func (l *httpLink) push(msg []byte) {
	select {
	case l.inbox <- msg:
	case <-l.ctx.Done():
	}
}

// failRequest answers a request the server could not be asked, so that its
// caller hears why at once.
func (l *httpLink) failRequest(m *jsonrpc.Message, format string, args ...any) {
	if !m.IsRequest() {
		l.log.Warn("sending to upstream failed", "method", m.Method, "err", fmt.Sprintf(format, args...))
		return
	}
	err := jsonrpc.Errorf(errUnavailable, "upstream %q: %s", l.name, fmt.Sprintf(format, args...))
	l.push((&jsonrpc.Message{ID: m.ID, Error: err}).Encode())
}

func (l *httpLink) setHeaders(req *http.Request, session string) {
	for k, v := range l.headers {
		req.Header.Set(k, v)
	}
	req.Header.Set("User-Agent", "mcpgate/"+l.version)
	if session != "" {
		req.Header.Set(headerSession, session)
	}
	l.mu.Lock()
	if l.protocol != "" {
		req.Header.Set(headerProtocol, l.protocol)
	}
	l.mu.Unlock()
}

// send POSTs one message and routes the answer. retry allows one new
// session when the server says it no longer knows ours. ctx ends the
// message's HTTP work.
func (l *httpLink) send(ctx context.Context, msg []byte, m *jsonrpc.Message, retry bool) {
	l.mu.Lock()
	legacy := l.legacy
	session := l.session
	l.mu.Unlock()
	if legacy {
		l.sendLegacy(ctx, msg, m)
		return
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
	resp, err := l.client.Do(req)
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
		// try once more, so the client's own session goes on.
		if err := l.reinitialize(session); err != nil {
			l.failRequest(m, "its session expired and a new one could not be started: %v", err)
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
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		l.failRequest(m, "HTTP %s: %s", resp.Status, bytes.TrimSpace(body))
	}
}

// redactURL drops what may hold a secret (user info, the query) from a URL
// that is about to appear in an error or a log.
func redactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(unparseable URL)"
	}
	u.User, u.RawQuery, u.Fragment = nil, "", ""
	return u.String()
}

// unwrapURLError drops net/http's "Post \"URL\":" wrapping, which would
// echo the full URL.
func unwrapURLError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
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
			l.failRequest(m, "its event stream for %s ended without an answer", m.Method)
			return
		}
		// The server closed the connection, not the stream: the answer is
		// to be had by resuming the stream.
		if why := l.resume(ctx, m, &pos); why != "" && ctx.Err() == nil {
			l.failRequest(m, "its event stream for %s ended without an answer, and resuming it failed: %s", m.Method, why)
		}
	default:
		l.failRequest(m, "unexpected Content-Type %q", resp.Header.Get("Content-Type"))
	}
}

// streamPos is how far a client got in one event stream, as the SSE
// standard keeps it across reconnections: the last event id and the
// reconnection time the server set.
type streamPos struct {
	lastID string
	retry  int // ms; -1 when the server set none
	events int // events read, in all
}

// readEvents passes every message event of a stream on, and reports whether
// the answer to m was among them. pos is where the stream stands; it is
// read first (a resumed stream goes on from it) and kept up to date.
// stopAtAnswer ends the reading at the answer, for a resumed stream the
// server may leave open.
func (l *httpLink) readEvents(body io.Reader, m *jsonrpc.Message, pos *streamPos, stopAtAnswer bool) bool {
	sr := newSSEReader(body, l.max)
	sr.lastID, sr.retry = pos.lastID, pos.retry
	defer func() { pos.lastID, pos.retry = sr.lastID, sr.retry }()
	answered := false
	for {
		ev, err := sr.Next()
		if errors.Is(err, errEventTooLarge) {
			l.log.Warn("skipped an over-size event from upstream", "limit", l.max)
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
			case d.IsResponse() && m != nil && m.IsRequest() && d.ID == m.ID:
				isAnswer = true
				l.noteProtocol(m, ev.Data)
			case d.IsResponse():
				// Answered elsewhere (a server may resume one stream on
				// another): the request's own stream need not be waited for.
				l.mu.Lock()
				l.endRequestLocked(d.ID)
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
			l.mu.Lock()
			session := l.session
			l.mu.Unlock()
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

// streamOpenWait bounds how long messages wait for the GET stream to open.
const streamOpenWait = 5 * time.Second

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

// reinitialize starts a new session after the server forgot old: the same
// initialize the gateway sent, then initialized. Concurrent callers share it.
func (l *httpLink) reinitialize(old string) error {
	l.mu.Lock()
	if l.session != old {
		l.mu.Unlock()
		return nil // someone already did
	}
	params := l.initParams
	l.session = ""
	l.mu.Unlock()
	id := jsonrpc.StringID("mcpgate-reinit-" + strconv.FormatInt(l.reinits.Add(1), 10))
	init := (&jsonrpc.Message{ID: id, Method: methodInitialize, Params: params}).Encode()
	req, err := http.NewRequestWithContext(l.ctx, http.MethodPost, l.url, bytes.NewReader(init))
	if err != nil {
		return err
	}
	l.setHeaders(req, "")
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := l.client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("initialize: HTTP %s", resp.Status)
	}
	session := resp.Header.Get(headerSession)
	// The answer is the gateway's business only in what it already knows;
	// read it to the end so the connection can be reused.
	io.Copy(io.Discard, io.LimitReader(resp.Body, int64(l.max)))
	l.mu.Lock()
	l.session = session
	l.mu.Unlock()
	note := (&jsonrpc.Message{Method: notifyInitialized}).Encode()
	req, err = http.NewRequestWithContext(l.ctx, http.MethodPost, l.url, bytes.NewReader(note))
	if err != nil {
		return err
	}
	l.setHeaders(req, session)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if resp, err := l.client.Do(req); err == nil {
		resp.Body.Close()
	}
	l.log.Warn("upstream forgot our session; started a new one and retried", "url", l.shown)
	select { // what the server sends on its own goes on the new session's stream
	case l.streamKick <- struct{}{}:
	default:
	}
	if l.onReinit != nil {
		l.onReinit()
	}
	return nil
}

// The older HTTP+SSE transport: GET the URL for an event stream whose first
// event names the endpoint to POST to; every answer comes on the stream.

func (l *httpLink) sendLegacy(ctx context.Context, msg []byte, m *jsonrpc.Message) {
	if m.Method == notifyInitialized {
		// The stream is open since before initialize; what waits for it
		// waits for initialized to arrive first.
		defer l.openGate()
	}
	endpoint, err := l.legacyEndpoint()
	if err != nil {
		l.failRequest(m, "%v", err)
		l.markGone(err.Error())
		return
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, bytes.NewReader(msg))
	if err != nil {
		l.failRequest(m, "%v", err)
		return
	}
	l.setHeaders(req, "")
	req.Header.Set("Content-Type", "application/json")
	resp, err := l.client.Do(req)
	if err != nil {
		if ctx.Err() == nil {
			l.failRequest(m, "POST %s: %v", redactURL(endpoint), unwrapURLError(err))
		}
		return
	}
	io.Copy(io.Discard, io.LimitReader(resp.Body, 4096))
	resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		l.failRequest(m, "HTTP %s", resp.Status)
	}
}

// legacyEndpoint opens the legacy event stream once and waits for the
// endpoint it announces.
func (l *httpLink) legacyEndpoint() (string, error) {
	l.mu.Lock()
	if l.legacyUp == nil && l.ctx.Err() == nil {
		l.legacyUp = make(chan struct{})
		l.work.Add(1)
		go l.runLegacyStream(l.legacyUp)
	}
	if l.legacyUp == nil {
		l.mu.Unlock()
		return "", errors.New("the link closed")
	}
	up := l.legacyUp
	l.mu.Unlock()
	select {
	case <-up:
	case <-l.ctx.Done():
		return "", errors.New("the link closed")
	case <-time.After(30 * time.Second):
		return "", fmt.Errorf("GET %s announced no endpoint within 30s", l.shown)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.endpoint == "" {
		return "", errors.New(l.lastErr)
	}
	return l.endpoint, nil
}

func (l *httpLink) runLegacyStream(up chan struct{}) {
	defer l.work.Done()
	announced := false
	fail := func(reason string) {
		l.mu.Lock()
		l.lastErr = reason
		l.mu.Unlock()
		if !announced {
			close(up)
		}
		l.markGone(reason)
	}
	req, err := http.NewRequestWithContext(l.ctx, http.MethodGet, l.url, nil)
	if err != nil {
		fail(err.Error())
		return
	}
	l.setHeaders(req, "")
	req.Header.Set("Accept", "text/event-stream")
	resp, err := l.client.Do(req)
	if err != nil {
		fail(fmt.Sprintf("cannot reach %s: %v", l.shown, unwrapURLError(err)))
		return
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		fail(fmt.Sprintf("GET %s (HTTP+SSE transport): HTTP %s", l.shown, resp.Status))
		return
	}
	sr := newSSEReader(resp.Body, l.max)
	for {
		ev, err := sr.Next()
		if errors.Is(err, errEventTooLarge) {
			continue
		}
		if err != nil {
			if l.ctx.Err() == nil {
				fail("the server ended its event stream")
			}
			return
		}
		switch {
		case ev.Type == "endpoint" && !announced:
			base, _ := url.Parse(l.url)
			ref, err := url.Parse(string(bytes.TrimSpace(ev.Data)))
			if err != nil {
				fail(fmt.Sprintf("bad endpoint %q: %v", ev.Data, err))
				return
			}
			endpoint := base.ResolveReference(ref)
			if !sameOrigin(endpoint, base) {
				// Every POST would carry the configured headers there.
				fail(fmt.Sprintf("its HTTP+SSE stream named an endpoint on another origin (%s), which mcpgate refuses: the configured headers go only to %s (the server must announce an endpoint on its own origin)", redactURL(endpoint.String()), origin(base)))
				return
			}
			l.mu.Lock()
			l.endpoint = endpoint.String()
			l.mu.Unlock()
			announced = true
			close(up)
		case ev.Type == "message":
			l.push(ev.Data)
		}
	}
}
