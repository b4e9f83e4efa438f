package main

import (
	"net"
	"time"
)

// A connection's write deadline is set on its socket only when the one
// there would not do: the HTTP front asks for a minute from each request
// (and net/http for none after it), and on a busy keep-alive every request
// set and cleared a timer of the runtime's for it. A deadline asked for is
// kept as the one on the socket when that one is earlier by no more than a
// 16th of the time left to the one asked (3.75 s of a minute); a
// deadline's removal waits for the next write (net/http writes nothing
// between its requests, and the next request asks for its own).

// writeKeptPart is the part of the time left to a deadline asked for by
// which the socket's may be earlier and kept.
const writeKeptPart = 16

func (c *limitedConn) SetWriteDeadline(t time.Time) error {
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	if t.IsZero() {
		if !c.writeDeadline.IsZero() {
			c.noWriteDeadline.Store(true) // lifted before the next write
		}
		return nil
	}
	c.noWriteDeadline.Store(false)
	// time.Until reads only the monotonic clock (t carries its reading).
	if on := c.writeDeadline; !on.IsZero() && !on.After(t) && t.Sub(on) <= time.Until(t)/writeKeptPart {
		return nil
	}
	if err := c.Conn.SetWriteDeadline(t); err != nil {
		return err
	}
	c.writeDeadline = t
	return nil
}

func (c *limitedConn) SetDeadline(t time.Time) error {
	if err := c.Conn.SetReadDeadline(t); err != nil {
		return err
	}
	return c.SetWriteDeadline(t)
}

func (c *limitedConn) Write(b []byte) (int, error) {
	if c.noWriteDeadline.Load() {
		c.liftWriteDeadline()
	}
	return c.Conn.Write(b)
}

// liftWriteDeadline takes a deadline whose removal was asked for off the
// socket, before a write.
func (c *limitedConn) liftWriteDeadline() {
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	if c.noWriteDeadline.Load() {
		c.Conn.SetWriteDeadline(time.Time{})
		c.writeDeadline = time.Time{}
		c.noWriteDeadline.Store(false)
	}
}

var _ net.Conn = (*limitedConn)(nil)
