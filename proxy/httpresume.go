package proxy

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/mcpgate/mcpgate/jsonrpc"
)

// Resuming an event stream (2025-11-25, "Resumability and Redelivery"): a
// server may close the connection of a POST's event stream before the
// answer, once it sent an event with an id (a "priming" event, usually
// with a retry time). The stream goes on: the client waits the retry time,
// GETs the endpoint with Last-Event-ID, and the server replays what came
// after that event, the answer among it. The conformance suite's client
// scenario sse-retry does exactly this.

const headerLastEventID = "Last-Event-ID"

const (
	// defaultRetry is the wait before resuming when the server set none
	// (the TypeScript SDK's initial reconnection delay).
	defaultRetry = time.Second
	// minRetry and maxRetry bound the wait a server can ask for: retry: 0
	// must not make a busy loop, and the request's own deadline bounds a
	// long one anyway.
	minRetry = 100 * time.Millisecond
	maxRetry = time.Minute
	// maxResumeFailures bounds reconnection attempts in a row that bring
	// no new event: a server that keeps failing them is not hammered.
	maxResumeFailures = 5
)

// retryWait is the wait before reconnecting the server asked for, or -1.
func retryWait(pos streamPos) time.Duration {
	if pos.retry < 0 {
		return -1
	}
	ms := min(pos.retry, int(maxRetry/time.Millisecond)) // no overflow from a huge retry
	return max(minRetry, time.Duration(ms)*time.Millisecond)
}

// resume takes the answer to m from its event stream, which the server
// closed after the event pos.lastID: it reconnects with GET and
// Last-Event-ID after the server's retry time, as often as the stream
// makes progress, until the answer comes or ctx ends (the gateway gave up
// on the request). It returns why it could not get the answer ("" when it
// did, or when ctx ended).
func (l *httpLink) resume(ctx context.Context, m *jsonrpc.Message, pos *streamPos) string {
	why := ""
	for failures := 0; failures < maxResumeFailures; {
		wait := retryWait(*pos)
		if wait < 0 {
			wait = defaultRetry
		}
		timer := time.NewTimer(wait)
		select {
		case <-timer.C:
		case <-ctx.Done():
			timer.Stop()
			return ""
		}
		session, ok := l.currentSession(ctx)
		if !ok {
			return ""
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, l.url, nil)
		if err != nil {
			return err.Error()
		}
		l.setHeaders(req, session)
		req.Header.Set("Accept", "text/event-stream")
		req.Header.Set(headerLastEventID, pos.lastID)
		resp, err := l.client.Do(req)
		switch {
		case ctx.Err() != nil:
			if err == nil {
				resp.Body.Close()
			}
			return ""
		case err != nil:
			why = fmt.Sprintf("GET %s: %v", l.shown, unwrapURLError(err))
			failures++
			continue
		}
		if resp.StatusCode != http.StatusOK {
			body := l.errorBody(resp.Body)
			resp.Body.Close()
			why = strings.TrimSpace(fmt.Sprintf("GET with %s %q: HTTP %s %s", headerLastEventID, pos.lastID, resp.Status, body))
			if resp.StatusCode == http.StatusMethodNotAllowed || resp.StatusCode == http.StatusNotFound {
				return why // no resumption here, or the session is gone: trying again brings nothing
			}
			failures++
			continue
		}
		before := pos.lastID
		answered := l.readEvents(resp.Body, m, pos, true)
		resp.Body.Close()
		if answered || ctx.Err() != nil {
			return ""
		}
		if pos.lastID == before {
			why = fmt.Sprintf("the stream resumed from %q ended again with no new event", before)
			failures++
		} else {
			failures = 0
		}
	}
	return fmt.Sprintf("%s (gave up after %d attempts in a row)", why, maxResumeFailures)
}
