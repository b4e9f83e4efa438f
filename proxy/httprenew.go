package proxy

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"

	"github.com/mcpgate/mcpgate/jsonrpc"
)

// A Streamable HTTP server that restarted, or expired our session, answers
// 404 for it (2025-11-25, "Session Management": the client MUST then start
// a new session with a new initialize). Every POST in flight may meet the
// 404 at once; they share one new session, and what is sent meanwhile waits
// for it: a message sent with no session, or with the forgotten one, would
// fail or start yet another.

// renewal is one start of a new session, shared by every sender.
type renewal struct {
	done chan struct{} // closed when over
	err  error         // why it failed; set before done is closed
}

// currentSession returns the session to send with: the one the server
// issued, after the new one being started, if any, is ready. It reports
// false if ctx ended first.
func (l *httpLink) currentSession(ctx context.Context) (string, bool) {
	l.mu.Lock()
	r, session := l.renewing, l.session
	l.mu.Unlock()
	if r == nil {
		return session, true
	}
	select {
	case <-r.done:
	case <-ctx.Done():
		return "", false
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.session, true // a failed renewal left the old one: its 404 tries again
}

// renewSession gets a new session after the server forgot old: it starts
// one, or joins the start under way, and waits for it within ctx. The start
// itself is bounded by the server's init_timeout and does not end with ctx:
// others wait for it too.
func (l *httpLink) renewSession(ctx context.Context, old string) error {
	l.mu.Lock()
	r := l.renewing
	if r == nil {
		if l.session != old {
			l.mu.Unlock()
			return nil // renewed since old was sent
		}
		if l.ctx.Err() != nil {
			l.mu.Unlock()
			return jsonrpc.ErrClosed
		}
		r = &renewal{done: make(chan struct{})}
		l.renewing = r
		l.work.Add(1) // under l.mu, the link alive: see end
		go l.runRenewal(r)
	}
	l.mu.Unlock()
	select {
	case <-r.done:
		return r.err
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (l *httpLink) runRenewal(r *renewal) {
	defer l.work.Done()
	ctx, cancel := context.WithTimeout(l.ctx, l.renewLife)
	session, err := l.startSession(ctx)
	cancel()
	if errors.Is(err, context.DeadlineExceeded) {
		err = fmt.Errorf("the server did not complete initialize within %v (raise mcpServers.%s.init_timeout)", l.renewLife, l.name)
	}
	l.mu.Lock()
	if err == nil {
		l.session = session
	}
	l.renewing, r.err = nil, err
	l.mu.Unlock()
	close(r.done)
	if err != nil {
		return
	}
	l.log.Warn("upstream forgot our session; started a new one and retried", "url", l.shown)
	select { // what the server sends on its own goes on the new session's stream
	case l.streamKick <- struct{}{}:
	default:
	}
	if l.onReinit != nil {
		l.onReinit()
	}
}

// startSession runs the handshake again with the initialize the gateway
// sent, and returns the new session once the server has been sent
// initialized: nothing else may use it before.
func (l *httpLink) startSession(ctx context.Context) (string, error) {
	l.mu.Lock()
	params := l.initParams
	l.mu.Unlock()
	id := jsonrpc.StringID("mcpgate-reinit-" + strconv.FormatInt(l.reinits.Add(1), 10))
	resp, err := l.postHandshake(ctx, (&jsonrpc.Message{ID: id, Method: methodInitialize, Params: params}).Encode(), "")
	if err != nil {
		return "", fmt.Errorf("initialize: %w", err)
	}
	session := resp.Header.Get(headerSession)
	// The answer is the gateway's business only in what it already knows;
	// read it to the end so the connection can be reused.
	io.Copy(io.Discard, io.LimitReader(resp.Body, int64(l.max)))
	resp.Body.Close()
	resp, err = l.postHandshake(ctx, (&jsonrpc.Message{Method: notifyInitialized}).Encode(), session)
	if err != nil {
		return "", fmt.Errorf("%s: %w", notifyInitialized, err)
	}
	resp.Body.Close()
	return session, nil
}

// postHandshake POSTs one message of the handshake; an answer other than
// 2xx is an error.
func (l *httpLink) postHandshake(ctx context.Context, msg []byte, session string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, l.url, bytes.NewReader(msg))
	if err != nil {
		return nil, err
	}
	l.setHeaders(req, session)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := l.client.Do(req)
	if err != nil {
		return nil, unwrapURLError(err)
	}
	if resp.StatusCode/100 != 2 {
		resp.Body.Close()
		return nil, fmt.Errorf("HTTP %s", resp.Status)
	}
	return resp, nil
}
