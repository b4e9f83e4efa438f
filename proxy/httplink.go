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
	related    map[jsonrpc.ID]jsonrpc.ID // a server request → our request on whose answer stream it came
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
		goneCh:     make(chan struct{}),
		legacy:     s.Type == config.TypeSSE,
	}
	// No overall timeout: event streams are long-lived. Requests are
	// bounded by the gateway's per-request deadlines instead.
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
func (l *httpLink) Write(msg []byte) error {
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
	if l.ctx.Err() != nil {
		l.mu.Unlock()
		return jsonrpc.ErrClosed
	}
	l.work.Add(1) // under l.mu: ordered before stop's Wait (see end)
	l.mu.Unlock()
	go func() {
		defer l.work.Done()
		l.send(msg, m, true)
	}()
	return nil
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
// session when the server says it no longer knows ours.
func (l *httpLink) send(msg []byte, m *jsonrpc.Message, retry bool) {
	l.mu.Lock()
	legacy := l.legacy
	session := l.session
	l.mu.Unlock()
	if legacy {
		l.sendLegacy(msg, m)
		return
	}
	req, err := http.NewRequestWithContext(l.ctx, http.MethodPost, l.url, bytes.NewReader(msg))
	if err != nil {
		l.failRequest(m, "%v", err)
		return
	}
	l.setHeaders(req, session)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := l.client.Do(req)
	if err != nil {
		if l.ctx.Err() != nil {
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
		l.readAnswer(resp, m)
	case resp.StatusCode == http.StatusNotFound && session != "" && m.Method != methodInitialize && retry:
		// The server restarted or expired our session: start a new one and
		// try once more, so the client's own session goes on.
		if err := l.reinitialize(session); err != nil {
			l.failRequest(m, "its session expired and a new one could not be started: %v", err)
			return
		}
		l.send(msg, m, false)
	case m.Method == methodInitialize && (resp.StatusCode == 400 || resp.StatusCode == 404 || resp.StatusCode == 405) && !isJSONRPC(resp):
		// A server of the older HTTP+SSE transport: it has no POST here.
		l.log.Info("upstream does not take Streamable HTTP; trying the older HTTP+SSE transport", "status", resp.StatusCode)
		l.mu.Lock()
		l.legacy = true
		l.mu.Unlock()
		l.sendLegacy(msg, m)
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
func (l *httpLink) readAnswer(resp *http.Response, m *jsonrpc.Message) {
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
		answered := l.readEvents(resp.Body, m)
		if !answered && m.IsRequest() && l.ctx.Err() == nil {
			l.failRequest(m, "its event stream for %s ended without an answer", m.Method)
		}
	default:
		l.failRequest(m, "unexpected Content-Type %q", resp.Header.Get("Content-Type"))
	}
}

// readEvents passes every message event of a stream on, and reports whether
// the answer to m was among them.
func (l *httpLink) readEvents(body io.Reader, m *jsonrpc.Message) bool {
	sr := newSSEReader(body, l.max)
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
		if ev.Type != "message" || len(bytes.TrimSpace(ev.Data)) == 0 {
			continue
		}
		if m != nil && m.IsRequest() {
			if d, err := jsonrpc.Decode(ev.Data); err == nil {
				switch {
				case d.IsResponse() && d.ID == m.ID:
					answered = true
					l.noteProtocol(m, ev.Data)
				case d.IsRequest():
					l.relate(d.ID, m.ID)
				}
			}
		}
		l.push(ev.Data)
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
// it offers one (405 means it does not), and keeps it open.
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
		for failures := 0; l.ctx.Err() == nil; {
			l.mu.Lock()
			session := l.session
			l.mu.Unlock()
			req, _ := http.NewRequestWithContext(l.ctx, http.MethodGet, l.url, nil)
			l.setHeaders(req, session)
			req.Header.Set("Accept", "text/event-stream")
			resp, err := l.client.Do(req)
			if err == nil {
				if resp.StatusCode == http.StatusMethodNotAllowed {
					resp.Body.Close()
					return // no stream offered
				}
				if resp.StatusCode == http.StatusOK {
					failures = 0
					l.readEvents(resp.Body, nil)
				}
				resp.Body.Close()
			}
			failures++
			select {
			case <-time.After(backoff(min(failures, 5), 30*time.Second)):
			case <-l.streamKick:
			case <-l.ctx.Done():
			}
		}
	}()
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

func (l *httpLink) sendLegacy(msg []byte, m *jsonrpc.Message) {
	endpoint, err := l.legacyEndpoint()
	if err != nil {
		l.failRequest(m, "%v", err)
		l.markGone(err.Error())
		return
	}
	req, err := http.NewRequestWithContext(l.ctx, http.MethodPost, endpoint, bytes.NewReader(msg))
	if err != nil {
		l.failRequest(m, "%v", err)
		return
	}
	l.setHeaders(req, "")
	req.Header.Set("Content-Type", "application/json")
	resp, err := l.client.Do(req)
	if err != nil {
		if l.ctx.Err() == nil {
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
