package proxy

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"sync"
	"sync/atomic"
	"time"
	"unicode"

	"github.com/mcpgate/mcpgate/config"
	"github.com/mcpgate/mcpgate/jsonrpc"
)

// The headers of MCP's Streamable HTTP transport.
const (
	headerSession  = "Mcp-Session-Id"
	headerProtocol = "Mcp-Protocol-Version"
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
	work   sync.WaitGroup // POSTs, event streams, a new session's handshake
	goneCh chan struct{}
	goneMu sync.Once

	places      chan struct{} // maxPOSTs-buffered: a token for each POST open (see Write)
	requestLife time.Duration // bounds a request's HTTP work: no caller of the gateway waits longer
	noticeLife  time.Duration // bounds the POST of a notification or an answer to the server
	renewLife   time.Duration // bounds starting a new session (the server's init_timeout)
	timeout     time.Duration // the server's timeout: retries wait no longer (see post); 0: only requestLife

	mu         sync.Mutex
	session    string          // Mcp-Session-Id the server issued
	protocol   string          // negotiated version, for MCP-Protocol-Version
	initParams json.RawMessage // to initialize again when the server forgets the session
	legacy     bool            // HTTP+SSE: POST to endpoint, everything comes on the stream
	modern     bool            // the modern era: stateless POSTs (see httpmodern.go)
	endpoint   string          // where the legacy transport POSTs
	legacyUp   chan struct{}   // closed once the legacy stream announced its endpoint
	getOpen    bool
	lastErr    string
	related    map[jsonrpc.ID]jsonrpc.ID         // a server request → our request on whose answer stream it came
	inflight   map[jsonrpc.ID]context.CancelFunc // our requests still awaiting an answer; ends each one's HTTP work
	streamUp   chan struct{}                     // closed once messages may go: see awaitStream
	streamSet  bool                              // streamUp is closed
	renewing   *renewal                          // the new session being started, if any: see renewSession
	reinits    atomic.Int64
	onReinit   func()              // told after a new session replaced a forgotten one
	redactCut  func(string) string // hides a secret's start left where an error body is cut; nil: nothing
	streamKick chan struct{}       // 1-buffered: the GET stream should reconnect now (a new session)
	// toolSchema returns a tool's inputSchema as the server last listed it
	// (for the Mcp-Param headers of the modern era); nil: none known.
	toolSchema func(tool string) (json.RawMessage, bool)
}

func newHTTPLink(s config.Server, maxMessage int, version string, log *slog.Logger) *httpLink {
	ctx, cancel := context.WithCancel(context.Background())
	if maxMessage <= 0 {
		maxMessage = jsonrpc.DefaultMaxMessage
	}
	l := &httpLink{
		name: s.Name, url: s.URL, shown: redactURL(s.URL), headers: s.Headers, max: maxMessage, version: version, log: log,
		ctx: ctx, cancel: cancel,
		places:      make(chan struct{}, maxPOSTs),
		requestLife: max(s.Timeout, s.MaxTimeout, s.InitTimeout),
		noticeLife:  min(s.Timeout, maxNoticeLife),
		renewLife:   s.InitTimeout,
		timeout:     s.Timeout,
		inbox:       make(chan []byte, 64),
		streamKick:  make(chan struct{}, 1),
		streamUp:    make(chan struct{}),
		goneCh:      make(chan struct{}),
		legacy:      s.Type == config.TypeSSE,
		inflight:    map[jsonrpc.ID]context.CancelFunc{},
	}
	if s.Timeout <= 0 { // a config.Server made without config.Load
		l.requestLife, l.noticeLife = max(l.requestLife, config.DefaultMaxTimeout), maxNoticeLife
	}
	if l.renewLife <= 0 {
		l.renewLife = config.DefaultInitTimeout
	}
	// No overall timeout: event streams are long-lived. Each POST has its
	// own deadline instead (see Write).
	l.client = &http.Client{Transport: newTransport(), CheckRedirect: l.checkRedirect}
	return l
}

// maxPOSTs bounds the POSTs a link has open at once. A request's POST stays
// open until its answer, so this is also the most requests in flight to one
// server. Past it Write waits: the outbox in front of the link fills, and
// the notifications there are dropped or coalesced as for a server that
// stops reading, while each request waits within its caller's deadline.
const maxPOSTs = 256

// maxNoticeLife bounds the POST of a notification or an answer to the
// server, which a server answers with 202 at once: one it holds open must
// not keep a place among maxPOSTs for long.
const maxNoticeLife = 30 * time.Second

// newTransport is net/http's default transport with room for maxPOSTs
// POSTs to one host, and the GET stream, a new session's handshake and the
// DELETE beside them. Each link has its own, so that one server's POSTs
// never wait for another's connections, and its idle connections end with
// it.
func newTransport() *http.Transport {
	t, ok := http.DefaultTransport.(*http.Transport)
	if ok {
		t = t.Clone()
	} else {
		t = &http.Transport{Proxy: http.ProxyFromEnvironment, ForceAttemptHTTP2: true}
	}
	t.MaxConnsPerHost = maxPOSTs + 4
	// Kept for the next burst of requests (net/http keeps 2): a fraction
	// of the bound, since every idle connection is a socket held open.
	t.MaxIdleConnsPerHost = 32
	t.IdleConnTimeout = 90 * time.Second
	return t
}

func (l *httpLink) Read() ([]byte, error) {
	select {
	case m := <-l.inbox:
		return m, nil
	case <-l.ctx.Done():
		return nil, io.EOF
	}
}

// Write sends one message in its own POST, once one of maxPOSTs places is
// free (waiting within ctx), and returns without waiting for the answer: a
// POST answered only when a long tool finishes must not hold up the outbox,
// and the caller's deadline covers the wait for the answer instead. The
// POST of a request ends with its answer, when the gateway gives it up, or
// after requestLife; any other POST after noticeLife.
func (l *httpLink) Write(ctx context.Context, msg []byte) error {
	written := time.Now() // a request's retries end within its timeout from here (see post)
	if l.ctx.Err() != nil {
		return jsonrpc.ErrClosed
	}
	m, err := jsonrpc.Decode(msg)
	if err != nil {
		return err
	}
	if m.Method == notifyCancelled {
		// Before waiting for a place: the request it ends may hold one.
		if id, ok := cancelledRequest(m.Params); ok {
			l.abandon(id)
		}
	}
	select {
	case l.places <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	case <-l.ctx.Done():
		return jsonrpc.ErrClosed
	}
	l.mu.Lock()
	if l.ctx.Err() != nil {
		l.mu.Unlock()
		<-l.places
		return jsonrpc.ErrClosed
	}
	if m.Method == methodInitialize {
		l.initParams = m.Params
	}
	if m.IsResponse() {
		delete(l.related, m.ID) // answered: the server's request is done
	}
	// A request's HTTP work (its POST, its stream, resuming it) ends when the
	// gateway gives up on it (see abandon), or when its answer comes on
	// another stream.
	life := l.noticeLife
	if m.IsRequest() {
		life = l.requestLife
	}
	work, done := context.WithTimeout(l.ctx, life)
	if m.IsRequest() {
		l.inflight[m.ID] = done
		work = l.withRetryDue(work, written)
	}
	l.work.Add(1) // under l.mu: ordered before stop's Wait (see end)
	l.mu.Unlock()
	go func() {
		defer l.work.Done()
		defer func() { <-l.places }()
		defer done()
		defer l.endRequest(m.ID, m.IsRequest())
		if l.isModern() {
			l.sendModern(work, msg, m)
			return
		}
		if m.Method != methodInitialize && m.Method != notifyInitialized && !m.IsResponse() {
			l.awaitStream(work)
		}
		l.send(work, msg, m, true)
	}()
	return nil
}

// abandon ends the HTTP work of our request id, which the gateway gave up
// on (its caller's deadline passed, or the client cancelled it). The
// gateway calls it at once, besides queueing notifications/cancelled: that
// may wait in the outbox behind a Write that waits for the very place
// among maxPOSTs this request holds.
func (l *httpLink) abandon(id jsonrpc.ID) {
	l.mu.Lock()
	l.endRequestLocked(id)
	l.mu.Unlock()
}

var _ requestAbandoner = (*httpLink)(nil)

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
	l.client.CloseIdleConnections()
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
	l.client.CloseIdleConnections() // those the last POSTs gave back
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

// push passes on one message from the server. A line break in it can only
// sit between JSON tokens (one in a string is escaped), where it is only
// layout; it goes, so that the message is one line wherever it travels on
// (a stdio client reads one message per line).
func (l *httpLink) push(msg []byte) {
	if bytes.ContainsAny(msg, "\r\n") {
		oneLine := make([]byte, 0, len(msg))
		for _, c := range msg {
			if c != '\r' && c != '\n' {
				oneLine = append(oneLine, c)
			}
		}
		msg = oneLine
	}
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

// maxErrorBody is how much of an HTTP error's body an error message quotes.
const maxErrorBody = 512

// errorBody reads the start of an HTTP error's body, to quote. Cut, it
// ends with "…", and what the cut may have left of a secret (the server
// echoing a token) is hidden: redaction of the whole message cannot
// recognise a part of one.
func (l *httpLink) errorBody(r io.Reader) string {
	body, _ := io.ReadAll(io.LimitReader(r, maxErrorBody+1))
	if len(body) <= maxErrorBody {
		return string(bytes.TrimSpace(body))
	}
	kept := string(bytes.TrimLeftFunc(trimPartialRune(body[:maxErrorBody]), unicode.IsSpace))
	if l.redactCut != nil {
		kept = l.redactCut(kept)
	}
	return kept + "…"
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

// streamPos is how far a client got in one event stream, as the SSE
// standard keeps it across reconnections: the last event id and the
// reconnection time the server set.
type streamPos struct {
	lastID string
	retry  int // ms; -1 when the server set none
	events int // events read, in all
	// skipped counts events over max_message_bytes, skipped: a stream
	// that then ends without its answer most likely had it among them.
	skipped int
}

// noAnswerWhy is what to add to "ended without an answer".
func (p *streamPos) noAnswerWhy(limit int) string {
	if p.skipped == 0 {
		return ""
	}
	return fmt.Sprintf("; %d event(s) over %d bytes were skipped, the answer most likely among them (raise max_message_bytes)", p.skipped, limit)
}

// streamOpenWait bounds how long messages wait for the GET stream to open.
const streamOpenWait = 5 * time.Second
