package main

import (
	"net"
	"net/http"
	"sync"
	"sync/atomic"
)

// maxHTTPConns bounds the connections the HTTP front holds at once. Each
// costs about 20 KB (a goroutine, its buffers) and up to maxHeaderBytes
// more while its headers arrive, all before any token is checked; with
// the descriptor limit the only bound, 10,000 idle keep-alives held
// 200 MB for the 2-minute idle timeout, and a container's limit is often
// a million. Far above what real clients open (a few each, max_sessions
// is 1000 by default).
const maxHTTPConns = 4096

// connLimit is a listener that holds at most max connections open. At the
// limit, a new connection closes the one idle longest (a keep-alive
// between requests, which a client opens again as it would after the idle
// timeout); with none idle it waits for one to close: the others are
// reading headers (10 s at most) or serving requests.
type connLimit struct {
	net.Listener
	max int

	mu   sync.Mutex
	open int
	// The idle connections, longest idle first: a list through the
	// connections themselves, so that at the limit the next to close is
	// found at once (a scan of 4096 took 60 µs, under mu, per connection).
	idleFirst, idleLast *limitedConn
	idleCount           int
	freed               chan struct{} // a place came free, or a connection went idle (capacity 1)
	closed              chan struct{}
	once                sync.Once
}

func newConnLimit(ln net.Listener, max int) *connLimit {
	return &connLimit{Listener: ln, max: max, freed: make(chan struct{}, 1), closed: make(chan struct{})}
}

type limitedConn struct {
	net.Conn
	l    *connLimit
	once sync.Once
	// idle: in l's idle list (prev, next: guarded by l.mu). net/http
	// calls a keep-alive active only once its next request's headers are
	// all read (up to the header deadline): its first bytes read take it
	// out of the list, or it would be closed under a request under way,
	// lost to its client.
	idle       atomic.Bool
	prev, next *limitedConn
}

func (c *limitedConn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	if n > 0 && c.idle.Load() {
		c.l.setIdle(c, false)
	}
	return n, err
}

func (c *limitedConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(c.l.release)
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

// release gives a closed connection's place back.
func (l *connLimit) release() {
	l.mu.Lock()
	l.open--
	l.mu.Unlock()
	l.wake()
}

// wake tells an Accept waiting for a place to look again.
func (l *connLimit) wake() {
	select {
	case l.freed <- struct{}{}:
	default:
	}
}

// Accept takes the next connection first, so that a place is made (an
// idle one closed) only for a connection that came; until it has one,
// that connection holds a descriptor and nothing of the server's.
func (l *connLimit) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	for {
		l.mu.Lock()
		if l.open < l.max {
			l.open++
			l.mu.Unlock()
			return &limitedConn{Conn: c, l: l}, nil
		}
		oldest := l.idleFirst
		if oldest != nil {
			l.unlinkIdle(oldest)
		}
		l.mu.Unlock()
		if oldest != nil {
			oldest.Close() // its place comes free now
			continue
		}
		select {
		case <-l.freed:
		case <-l.closed:
			c.Close()
			return nil, net.ErrClosed
		}
	}
}

// setIdle notes whether c is idle: idle again, it goes last.
func (l *connLimit) setIdle(c *limitedConn, idle bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if c.idle.Load() {
		l.unlinkIdle(c)
	}
	if !idle {
		return
	}
	c.prev, c.next = l.idleLast, nil
	if l.idleLast != nil {
		l.idleLast.next = c
	} else {
		l.idleFirst = c
	}
	l.idleLast = c
	l.idleCount++
	c.idle.Store(true)
}

// unlinkIdle takes c, which is idle, out of the idle list. Guarded by l.mu.
func (l *connLimit) unlinkIdle(c *limitedConn) {
	if c.prev != nil {
		c.prev.next = c.next
	} else {
		l.idleFirst = c.next
	}
	if c.next != nil {
		c.next.prev = c.prev
	} else {
		l.idleLast = c.prev
	}
	c.prev, c.next = nil, nil
	l.idleCount--
	c.idle.Store(false)
}

func (l *connLimit) Close() error {
	l.once.Do(func() { close(l.closed) })
	return l.Listener.Close()
}

// track is the server's ConnState hook: it keeps which connections are
// idle, in the order they went idle.
func (l *connLimit) track(c net.Conn, state http.ConnState) {
	lc, ok := c.(*limitedConn)
	if !ok {
		return
	}
	l.setIdle(lc, state == http.StateIdle)
	if state == http.StateIdle {
		l.wake() // an Accept waiting may close it
	}
}
