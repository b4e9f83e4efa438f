package main

import (
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpgate/mcpgate/httpfront"
)

// maxHTTPConns bounds the connections the HTTP front holds at once (or
// twice max_sessions and 1024 more, if that is more: a session may hold a
// GET stream and POSTs at once). Each costs about 20 KB (a goroutine, its
// buffers) and up to maxHeaderBytes more while its headers arrive, all
// before any token is checked; with the descriptor limit the only bound,
// 10,000 idle keep-alives held 200 MB for the 2-minute idle timeout, and a
// container's limit is often a million. Far above what real clients open
// (a few each, max_sessions is 1000 by default).
const maxHTTPConns = 4096

// httpConnLimit is the front's bound for a config's max_sessions.
func httpConnLimit(maxSessions int) int { return max(maxHTTPConns, 2*maxSessions+1024) }

// headerStall is how long a connection may take over its request's
// headers before, at the limit, a new connection may take its place. A
// real client sends its headers at once; one that trickles them (a
// slowloris) would otherwise hold its place for the whole header deadline,
// and a few hundred such connections a second would hold every place.
const headerStall = time.Second

// connLimit is a listener that holds at most max connections open. At the
// limit, a new connection closes the one idle longest (a keep-alive
// between requests, which a client opens again as it would after the idle
// timeout), else the one that has been reading its request's headers
// longest if that is headerStall or more, else the one whose request body
// (httpfront.BodyReader) has brought nothing for longest, if that is
// headerStall or more; else it waits for a place: the others are serving
// requests, or just began reading their headers or stalling.
type connLimit struct {
	net.Listener
	max int

	mu   sync.Mutex
	open int
	// The connections that may be closed to make a place, each in the
	// order they joined: so that at the limit the next to close is found
	// at once (a scan of 4096 took 60 µs, under mu, per connection).
	idle, heading connList
	// all are the connections open, each at its allAt: at the limit, those
	// reading a body are looked through for one that stalled (a scan, but
	// only then, where a list would take mu on every request's body).
	all    []*limitedConn
	freed  chan struct{} // a place came free, or a connection went idle (capacity 1)
	closed chan struct{}
	once   sync.Once
	// waiting counts the Accepts waiting on freed: with none (as on every
	// request while places are free), nobody is told. Changed under mu;
	// read without it by ReadingBody, which takes no lock on a request.
	waiting atomic.Int32
}

func newConnLimit(ln net.Listener, max int) *connLimit {
	return &connLimit{Listener: ln, max: max, freed: make(chan struct{}, 1), closed: make(chan struct{})}
}

type limitedConn struct {
	net.Conn
	l    *connLimit
	once sync.Once
	// idle: in l.idle. net/http calls a keep-alive active only once its
	// next request's headers are all read (up to the header deadline):
	// its first bytes read move it to l.heading, or it would be closed
	// under a request under way, lost to its client.
	idle atomic.Bool
	// Guarded by l.mu: the list it is in (nil: none, it is serving a
	// request or closing), since when (in l.heading only: the idle are
	// closed in their order alone, and their time is not read on every
	// request), its neighbours there.
	list       *connList
	since      time.Time
	prev, next *limitedConn
	closed     bool
	allAt      int // its index in l.all, while open
	// reading: a request's body is being read (ReadingBody); progress:
	// when a read last brought some of it (Unix ns), or when it began.
	reading  atomic.Bool
	progress atomic.Int64

	// The write deadline on the socket, set only when the one there
	// would not do (connwrite.go); noWriteDeadline: none was asked for
	// since, and it is lifted before the next write.
	writeMu         sync.Mutex
	writeDeadline   time.Time
	noWriteDeadline atomic.Bool
}

// connList is a list through the connections themselves, oldest first.
type connList struct {
	first, last *limitedConn
	count       int
}

func (q *connList) push(c *limitedConn, now time.Time) {
	c.list, c.since = q, now
	c.prev, c.next = q.last, nil
	if q.last != nil {
		q.last.next = c
	} else {
		q.first = c
	}
	q.last = c
	q.count++
}

func (q *connList) remove(c *limitedConn) {
	if c.prev != nil {
		c.prev.next = c.next
	} else {
		q.first = c.next
	}
	if c.next != nil {
		c.next.prev = c.prev
	} else {
		q.last = c.prev
	}
	c.list, c.prev, c.next = nil, nil, nil
	q.count--
}

// move puts c last in to (nil: in no list); a closed connection joins
// none (net/http may call it idle after it was closed). Guarded by l.mu.
func (l *connLimit) move(c *limitedConn, to *connList) {
	if c.list != nil {
		c.list.remove(c)
	}
	if to != nil && !c.closed {
		var now time.Time
		if to == &l.heading {
			now = time.Now()
		}
		to.push(c, now)
	}
	c.idle.Store(c.list == &l.idle)
}

func (c *limitedConn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	if n > 0 && c.reading.Load() {
		c.progress.Store(time.Now().UnixNano())
	}
	if n > 0 && c.idle.Load() {
		c.l.mu.Lock()
		if c.list == &c.l.idle {
			c.l.move(c, &c.l.heading)
		}
		c.l.mu.Unlock()
	}
	return n, err
}

func (c *limitedConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(func() { c.l.release(c) })
	return err
}

// CloseWrite passes net/http's half-close on: before it closes a
// connection whose request it did not read to the end (a 431 for headers
// past the limit, a 413), it sends its end of the stream first, so that
// the client reads the answer to its end; hidden by the wrapper, the
// close came as a reset and the answer's end was lost.
func (c *limitedConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}

// ReadingBody is told by the HTTP front while a request's body is read
// (httpfront.BodyReader): a body that brings nothing for headerStall may
// give its place up at the limit, as headers that stall do.
func (c *limitedConn) ReadingBody(reading bool) {
	if reading {
		c.progress.Store(time.Now().UnixNano())
	}
	c.reading.Store(reading)
	// An Accept that looked before this body began set no timer for it:
	// it counted itself waiting first, so one of the two sees the other.
	if reading && c.l.waiting.Load() > 0 {
		c.l.wake()
	}
}

// release gives a closed connection's place back.
func (l *connLimit) release(c *limitedConn) {
	l.mu.Lock()
	l.open--
	c.closed = true
	l.move(c, nil)
	last := l.all[len(l.all)-1]
	l.all[c.allAt], last.allAt = last, c.allAt
	l.all[len(l.all)-1] = nil
	l.all = l.all[:len(l.all)-1]
	waiting := l.waiting.Load() > 0
	l.mu.Unlock()
	if waiting {
		l.wake()
	}
}

// stalledBody returns the connection whose body has brought nothing for
// longest, if that is headerStall or more; else how long until one could
// have (negative: none is reading a body). Guarded by l.mu.
func (l *connLimit) stalledBody() (victim *limitedConn, stalls time.Duration) {
	now := time.Now().UnixNano()
	oldest := now
	for _, c := range l.all {
		// The flag first: ReadingBody stores the progress before it, so a
		// body that just began is not read with the last one's progress.
		if !c.reading.Load() {
			continue
		}
		if p := c.progress.Load(); p < oldest {
			victim, oldest = c, p
		}
	}
	if victim == nil {
		return nil, -1
	}
	if quiet := time.Duration(now - oldest); quiet < headerStall {
		return nil, headerStall - quiet
	}
	return victim, 0
}

// wake tells an Accept waiting for a place to look again.
func (l *connLimit) wake() {
	select {
	case l.freed <- struct{}{}:
	default:
	}
}

// Accept takes the next connection first, so that a place is made (an
// idle or stalled one closed) only for a connection that came; until it
// has one, that connection holds a descriptor and nothing of the server's.
func (l *connLimit) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	for {
		l.mu.Lock()
		if l.open < l.max {
			l.open++
			lc := &limitedConn{Conn: c, l: l, allAt: len(l.all)}
			l.all = append(l.all, lc)
			l.move(lc, &l.heading)
			l.mu.Unlock()
			return lc, nil
		}
		l.waiting.Add(1) // before the look at the bodies (see ReadingBody)
		victim, stalls := l.idle.first, time.Duration(-1)
		if h := l.heading.first; victim == nil && h != nil {
			if age := time.Since(h.since); age >= headerStall {
				victim = h
			} else {
				stalls = headerStall - age
			}
		}
		if victim == nil {
			var body time.Duration
			if victim, body = l.stalledBody(); victim == nil && body >= 0 && (stalls < 0 || body < stalls) {
				stalls = body
			}
		}
		if victim != nil {
			l.waiting.Add(-1)
			l.move(victim, nil)
		}
		l.mu.Unlock()
		if victim != nil {
			victim.Close() // its place comes free now
			continue
		}
		ok := l.wait(stalls)
		l.waiting.Add(-1)
		if !ok {
			c.Close()
			return nil, net.ErrClosed
		}
	}
}

// wait waits for a place to come free, or for the connection reading its
// headers longest to stall (after stalls; never when negative); false when
// the listener closed.
func (l *connLimit) wait(stalls time.Duration) bool {
	var stalled <-chan time.Time
	if stalls >= 0 {
		t := time.NewTimer(stalls)
		defer t.Stop()
		stalled = t.C
	}
	select {
	case <-l.freed:
	case <-stalled:
	case <-l.closed:
		return false
	}
	return true
}

func (l *connLimit) Close() error {
	l.once.Do(func() { close(l.closed) })
	return l.Listener.Close()
}

// track is the server's ConnState hook: it keeps which connections are
// idle, and which are reading their first request's headers, in the order
// they became so.
func (l *connLimit) track(c net.Conn, state http.ConnState) {
	lc, ok := c.(*limitedConn)
	if !ok || state == http.StateNew { // Accept put it in l.heading
		return
	}
	l.mu.Lock()
	if state == http.StateIdle {
		l.move(lc, &l.idle)
	} else { // active, hijacked, closed
		l.move(lc, nil)
	}
	waiting := l.waiting.Load() > 0
	l.mu.Unlock()
	if state == http.StateIdle && waiting {
		l.wake() // an Accept waiting may close it
	}
}

// frontServer is the HTTP front's server, its connections held by l.
func frontServer(front *httpfront.Front, l *connLimit) *http.Server {
	srv := &http.Server{Handler: front, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 2 * time.Minute, MaxHeaderBytes: maxHeaderBytes,
		ConnState: l.track, ConnContext: httpfront.ConnContext}
	front.BoundBodies(srv)
	return srv
}
