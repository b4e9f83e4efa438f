package proxy

import (
	"slices"
	"strings"
	"sync"
	"time"
	"weak"

	"github.com/mcpgate/mcpgate/jsonrpc"
)

// A call its client gave up on (cancelled, disconnected, ended by DELETE,
// past its deadline) is not over for the server: one that ignores the
// cancellation may still ask the client about it. Over stdio nothing names
// the call a server request belongs to, so, were the given-up call
// forgotten, causeOf would hand the question to whichever other session
// still has a call in flight: another client's private question, and its
// answer to a call it never made. The connection remembers, for a while,
// which sessions gave calls up, and causeOf counts them as candidates.
//
// Bounded: at most maxGivenUp per connection, each for the server's timeout (at most maxGivenUpWindow); forgotten at
// once when the server answers late, since then it cannot ask about the
// call any more; all forgotten with the connection (a restarted server
// knows none of them). Expired lazily, on every add and lookup: no timer.
// Past the bound, a session's new call pushes out its own oldest, so that
// a client abandoning calls by the hundred cannot push another's out and
// take the questions about it; a call of a session not yet remembered
// pushes out the oldest, and until that call's window ends an unknown
// session counts as a candidate (pushedOutUntil).
// A session is held weakly: a stateless one is made for one request and
// holds it (up to max_message_bytes), and one ended is still a candidate,
// as sessionGone.

const (
	maxGivenUp       = 256
	maxGivenUpWindow = 2 * time.Minute
)

// givenUpCalls are the calls over one connection that their clients gave
// up on while the server had not answered.
type givenUpCalls struct {
	mu    sync.Mutex
	calls []givenUpCall // oldest first
	// pushedOutUntil: a call pushed out by the bound is remembered as a
	// session no longer known until then.
	pushedOutUntil time.Time
}

type givenUpCall struct {
	s     weak.Pointer[session]
	upID  string // the id the call went upstream with, a copy of its own
	until time.Time
}

// givenUpWindow is how long u's given-up calls are remembered: as long as
// u is let to take over a call.
func (u *upstream) givenUpWindow() time.Duration {
	if w := u.cfg.Timeout; w > 0 && w < maxGivenUpWindow {
		return w
	}
	return maxGivenUpWindow
}

// add remembers that s gave up the call upID until now+window.
func (g *givenUpCalls) add(s *session, upID jsonrpc.ID, now time.Time, window time.Duration) {
	if g == nil || s == nil {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	g.expire(now)
	ws := weak.Make(s)
	if len(g.calls) >= maxGivenUp {
		out := slices.IndexFunc(g.calls, func(c givenUpCall) bool { return c.s == ws })
		if out < 0 {
			out = 0
			g.pushedOutUntil = g.calls[0].until
		}
		g.calls = slices.Delete(g.calls, out, out+1)
	}
	// Copied: a call's id may view the call's own memory, which is reused.
	g.calls = append(g.calls, givenUpCall{s: ws, upID: strings.Clone(upID.String()), until: now.Add(window)})
}

// forget drops the call upID: the server answered it.
func (g *givenUpCalls) forget(upID jsonrpc.ID) {
	if g == nil {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	for i := range g.calls {
		if g.calls[i].upID == upID.String() {
			g.calls = slices.Delete(g.calls, i, i+1)
			return
		}
	}
}

// sessionGone stands for a session that gave a call up and has ended
// since: no session alive is it.
var sessionGone = &session{id: "(ended)"}

// sessionsInto adds to into the sessions alive with a call given up and
// remembered at now, and counts the ended ones (one more while a call
// pushed out by the bound would still be remembered).
func (g *givenUpCalls) sessionsInto(now time.Time, into map[*session]bool) (ended int) {
	if g == nil {
		return 0
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	g.expire(now)
	var gone map[weak.Pointer[session]]bool
	for _, c := range g.calls {
		if s := c.s.Value(); s != nil {
			into[s] = true
		} else if !gone[c.s] {
			if gone == nil {
				gone = map[weak.Pointer[session]]bool{}
			}
			gone[c.s] = true
		}
	}
	if now.Before(g.pushedOutUntil) {
		return len(gone) + 1
	}
	return len(gone)
}

// expire forgets the calls remembered long enough. Guarded by g.mu.
func (g *givenUpCalls) expire(now time.Time) {
	kept := g.calls[:0]
	for _, c := range g.calls {
		if now.Before(c.until) {
			kept = append(kept, c)
		}
	}
	clear(g.calls[len(kept):]) // no session held by what is forgotten
	g.calls = kept
}
