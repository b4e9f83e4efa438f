package proxy

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"time"

	"github.com/mcpgate/mcpgate/internal/sse"

	"github.com/mcpgate/mcpgate/jsonrpc"
)

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
	sr := sse.NewReader(resp.Body, l.max)
	for {
		ev, err := sr.Next()
		if errors.Is(err, sse.ErrEventTooLarge) {
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
