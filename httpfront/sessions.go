package httpfront

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/mcpgate/mcpgate/proxy"
)

// httpSession is one client's session over HTTP.
type httpSession struct {
	id       string
	idHeader []string // id as the value of every answer's Mcp-Session-Id header, made once (net/http only reads it)
	client   string   // clientOf the request that opened it
	stream   *httpStream

	mu       sync.Mutex
	protocol string // the version initialize's answer gave
	lastUsed time.Time
	active   int // requests and streams open now
}

func (hs *httpSession) setVersion(v string) {
	hs.mu.Lock()
	hs.protocol = v
	hs.mu.Unlock()
}

func (hs *httpSession) version() string {
	hs.mu.Lock()
	defer hs.mu.Unlock()
	return hs.protocol
}

// newSession starts a session whose stream is fed by HTTP requests.
func (f *Front) newSession(r *http.Request, legacy bool) (*httpSession, error) {
	id := f.routableID(newSessionID())
	hs := &httpSession{id: id, idHeader: []string{id}, client: f.clientOf(r), stream: newHTTPStream(id, legacy, f.g.Logger(), f.writeTimeout), lastUsed: time.Now()}
	hs.stream.held.budget = &f.bodies
	hs.stream.kept = &f.keptNotes
	f.mu.Lock()
	if f.closed {
		f.mu.Unlock()
		return nil, errors.New("mcpgate is shutting down: it takes no new sessions")
	}
	// Sessions past their idle time are gone whether or not the janitor
	// has come by yet: they take no place from a new one.
	expired := f.takeExpiredLocked(time.Now())
	if len(expired) > 0 {
		defer f.endExpired(expired)
	}
	if len(f.sessions)+f.listens >= f.cfg.MaxSessions {
		f.mu.Unlock()
		f.g.Logger().Warn("HTTP session refused: too many open", "max_sessions", f.cfg.MaxSessions)
		return nil, fmt.Errorf("too many sessions open (max_sessions is %d); try again later", f.cfg.MaxSessions)
	}
	if err := f.tooManySessionsOf(hs.client); err != nil {
		f.mu.Unlock()
		f.g.Logger().Warn("HTTP session refused: its client holds its share", "max_sessions", f.cfg.MaxSessions)
		return nil, err
	}
	f.sessions[hs.id] = hs
	f.serving.Add(1)
	f.mu.Unlock()
	go func() {
		defer f.serving.Done()
		f.g.Serve(f.sessionsCtx, hs.stream, proxy.ServeOptions{SessionID: hs.id, Client: hs.client, Ended: hs.stream.deleted.Load})
		f.mu.Lock()
		delete(f.sessions, hs.id)
		f.mu.Unlock()
	}()
	return hs, nil
}

func (hs *httpSession) use(delta int) {
	hs.mu.Lock()
	hs.active += delta
	if hs.active == 0 {
		// Only an idle session's last use is read (idleSince): it is the
		// time it became idle.
		hs.lastUsed = time.Now()
	}
	hs.mu.Unlock()
}

func (hs *httpSession) idleSince() (time.Time, bool) {
	hs.mu.Lock()
	defer hs.mu.Unlock()
	return hs.lastUsed, hs.active == 0
}

// expireIdle ends sessions unused for session_idle: clients often never
// send DELETE (the TypeScript SDK's close() does not).
func (f *Front) expireIdle() {
	defer f.janitor.Done()
	tick := time.NewTicker(min(f.cfg.SessionIdle/4+time.Millisecond, time.Minute))
	defer tick.Stop()
	for {
		select {
		case <-f.stop:
			return
		case <-tick.C:
		}
		f.mu.Lock()
		expired := f.takeExpiredLocked(time.Now())
		f.mu.Unlock()
		f.endExpired(expired)
	}
}

// takeExpiredLocked removes the sessions unused for longer than
// session_idle at now; the caller ends them (endExpired) once f.mu is
// released.
func (f *Front) takeExpiredLocked(now time.Time) []*httpSession {
	var expired []*httpSession
	for id, hs := range f.sessions {
		if f.expired(hs, now) {
			expired = append(expired, hs)
			delete(f.sessions, id)
		}
	}
	return expired
}

// expired reports whether hs has been idle past session_idle at now (the
// zero time: the clock, read only if hs is idle).
func (f *Front) expired(hs *httpSession, now time.Time) bool {
	last, idle := hs.idleSince()
	if !idle {
		return false // in use, as one with requests in flight is, whatever the time
	}
	if now.IsZero() {
		now = time.Now() // read only for an idle session: most lookups are of busy ones
	}
	return now.Sub(last) > f.cfg.SessionIdle
}

func (f *Front) endExpired(expired []*httpSession) {
	for _, hs := range expired {
		f.g.Logger().Info("HTTP session expired", "session", hs.id, "idle", f.cfg.SessionIdle)
		hs.stream.end()
	}
}

// lookup finds the session a request names, and checks the protocol
// version it says it speaks.
func (f *Front) lookup(r *http.Request) (*httpSession, int, error) {
	id := header(r.Header, headerSession)
	if id == "" {
		return nil, http.StatusBadRequest, fmt.Errorf("missing %s header", headerSession)
	}
	f.mu.Lock()
	hs := f.sessions[id]
	if hs != nil && f.expired(hs, time.Time{}) {
		// Past its idle time it is gone, whether or not the janitor has
		// come by yet: how late it runs on a loaded machine is no part
		// of what session_idle means.
		delete(f.sessions, id)
		f.mu.Unlock()
		f.endExpired([]*httpSession{hs})
		hs = nil
	} else {
		f.mu.Unlock()
	}
	if hs == nil || hs.stream.legacy || hs.client != f.clientOf(r) {
		return nil, http.StatusNotFound, errors.New("unknown or expired session: initialize a new one")
	}
	if v := header(r.Header, headerProtocol); v != "" && !proxy.SupportsVersion(v) {
		return nil, http.StatusBadRequest, fmt.Errorf("unsupported %s %q (mcpgate speaks %v)", headerProtocol, v, proxy.ProtocolVersions())
	}
	return hs, 0, nil
}

// serveGet opens the session's stream for messages not tied to a request.
func (f *Front) serveGet(w http.ResponseWriter, r *http.Request) {
	if !strings.Contains(header(r.Header, headerAccept), "text/event-stream") {
		http.Error(w, "GET opens an event stream: send Accept: text/event-stream", http.StatusNotAcceptable)
		return
	}
	hs, status, err := f.lookup(r)
	if err != nil {
		http.Error(w, err.Error(), status)
		return
	}
	hs.use(1)
	defer hs.use(-1)
	hs.stream.serveStandalone(w, r, nil)
}

func (f *Front) serveDelete(w http.ResponseWriter, r *http.Request) {
	hs, status, err := f.lookup(r)
	if err != nil {
		http.Error(w, err.Error(), status)
		return
	}
	f.drop(hs)
	w.WriteHeader(http.StatusNoContent)
}

// drop ends a session at once: nobody waits for the answers to its
// requests in flight.
func (f *Front) drop(hs *httpSession) {
	f.mu.Lock()
	delete(f.sessions, hs.id)
	f.mu.Unlock()
	hs.stream.deleted.Store(true)
	hs.stream.end()
}

// newSessionID returns 128 random bits, hex-encoded: a session id carries
// no meaning and cannot be guessed.
func newSessionID() string {
	var b [16]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
