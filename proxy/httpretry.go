package proxy

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptrace"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// Retries toward HTTP upstreams. A server behind a load balancer answers
// 502/503/504 while an instance restarts and 429 when it sheds load; a
// connection may be refused for a moment. A request that is safe to send
// twice is sent again after a pause: the server's Retry-After if it gave
// one, else exponential backoff with full jitter (so that many gateways do
// not retry in step), and never past the request's deadline. A request that
// acts (tools/call, prompts/get) is sent again only when it cannot have
// reached the server: its connection was never made.

// repeatable lists the requests to an upstream that are safe to send more
// than once: they read, list or negotiate, and change nothing. Besides what
// clients ask, it holds the gateway's own handshake. (Kept here, not in
// clientMethods: it is about requests toward upstreams.)
var repeatable = map[string]bool{
	methodInitialize:    true,
	methodDiscover:      true,
	methodPing:          true,
	methodToolsList:     true,
	methodPromptsList:   true,
	methodResourcesList: true,
	methodTemplatesList: true,
	methodResourcesRead: true,
	methodComplete:      true,
}

// retryPolicy says how often and how soon a request is sent again.
type retryPolicy struct {
	attempts int           // at most, the first one included
	base     time.Duration // the first backoff's ceiling; doubled each time
	ceiling  time.Duration // the most a backoff waits
}

// httpRetry is the policy toward HTTP upstreams: four attempts, the
// backoffs within 0–250ms, 0–500ms, 0–1s; a Retry-After is honoured as long
// as the request's deadline allows.
var httpRetry = retryPolicy{attempts: 4, base: 250 * time.Millisecond, ceiling: 5 * time.Second}

// retryStatus reports whether an HTTP status says "not done; try later".
func retryStatus(code int) bool {
	switch code {
	case http.StatusTooManyRequests, http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		return true
	}
	return false
}

// parseRetryAfter reads a Retry-After header: delay-seconds, or an HTTP
// date (RFC 9110 §10.2.3), as a wait from now. A date in the past is no
// wait; a value that is neither is ignored (ok false).
func parseRetryAfter(v string, now time.Time) (time.Duration, bool) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, false
	}
	if secs, err := strconv.ParseUint(v, 10, 32); err == nil {
		return time.Duration(secs) * time.Second, true
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(t.Sub(now), 0), true
	}
	return 0, false
}

// backoff is the wait before retry n (1-based) with no Retry-After: a
// random duration in [0, min(ceiling, base·2ⁿ⁻¹)].
func (p retryPolicy) backoff(n int) time.Duration {
	top := p.ceiling
	if n < 30 && p.base<<(n-1) < top {
		top = p.base << (n - 1)
	}
	return rand.N(top + 1)
}

// attemptFunc makes one attempt at a request. reached says whether the
// request may have reached the server (a connection was made for it).
type attemptFunc func(ctx context.Context) (resp *http.Response, reached bool, err error)

// retry makes attempts until one is answered with something other than
// "try later", the policy's attempts are spent, or the next wait would end
// past deadline (zero: only ctx bounds it). safe says the request may be
// sent again after it may have reached the server. What it returns is the
// last attempt's outcome, and a note for an error message that says why
// retrying stopped ("" when there was nothing to retry). A response
// returned is the caller's to close; those retried past are closed here.
func (p retryPolicy) retry(ctx context.Context, safe bool, deadline time.Time, attempt attemptFunc) (*http.Response, error, string) {
	for n := 1; ; n++ {
		resp, reached, err := attempt(ctx)
		if ctx.Err() != nil {
			return resp, err, ""
		}
		if err == nil && !retryStatus(resp.StatusCode) {
			return resp, nil, ""
		}
		if !safe && err == nil {
			return resp, nil, "; not sent again, since it may have reached the server"
		}
		if !safe && reached {
			return nil, err, ""
		}
		if n >= p.attempts {
			return resp, err, fmt.Sprintf(" (after %d attempts)", n)
		}
		wait := p.backoff(n)
		if resp != nil {
			if after, ok := parseRetryAfter(resp.Header.Get("Retry-After"), time.Now()); ok {
				wait = after
			}
		}
		if !deadline.IsZero() && time.Now().Add(wait).After(deadline) {
			return resp, err, fmt.Sprintf(" (it asked to be retried after %v, past the request's deadline)", wait.Round(time.Millisecond))
		}
		if resp != nil {
			io.Copy(io.Discard, io.LimitReader(resp.Body, 4096)) // the connection can serve the retry
			resp.Body.Close()
		}
		timer := time.NewTimer(wait)
		select {
		case <-timer.C:
		case <-ctx.Done():
			timer.Stop()
			return nil, ctx.Err(), ""
		}
	}
}

// post sends req (a POST whose body can be had again: GetBody), with
// retries as httpRetry says. A connection error that is not retried comes
// back as err; the note says why retrying stopped, for the message of a
// failure.
func (l *httpLink) post(req *http.Request, method string) (*http.Response, error, string) {
	ctx := req.Context()
	deadline, ok := ctx.Value(retryDueKey{}).(time.Time)
	if !ok && l.timeout > 0 {
		deadline = time.Now().Add(l.timeout)
	}
	if d, ok := ctx.Deadline(); ok && (deadline.IsZero() || d.Before(deadline)) {
		deadline = d
	}
	tries := 0
	return httpRetry.retry(ctx, repeatable[method], deadline, func(ctx context.Context) (*http.Response, bool, error) {
		tries++
		r := req
		if tries > 1 {
			l.log.Debug("sending a request to the upstream again", "method", method, "attempt", tries)
			r = req.Clone(ctx)
			body, err := req.GetBody()
			if err != nil {
				return nil, false, err
			}
			r.Body = body
		}
		var reached atomic.Bool
		r = r.WithContext(httptrace.WithClientTrace(r.Context(), &httptrace.ClientTrace{GotConn: func(httptrace.GotConnInfo) { reached.Store(true) }}))
		resp, err := l.client.Do(r)
		return resp, reached.Load(), err
	})
}

// retryDueKey carries, in a request's HTTP work context, when its timeout
// ends counted from when the link was given it: waiting for a place among
// maxPOSTs, for the event stream, or for a new session uses up that
// timeout too, and a POST sent again after a new session is not given a
// whole new one.
type retryDueKey struct{}

// withRetryDue is ctx carrying the retry deadline of a request the link was
// given at written (none when the server has no timeout).
func (l *httpLink) withRetryDue(ctx context.Context, written time.Time) context.Context {
	if l.timeout <= 0 {
		return ctx
	}
	return context.WithValue(ctx, retryDueKey{}, written.Add(l.timeout))
}
