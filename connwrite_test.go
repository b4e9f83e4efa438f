package main

import (
	"errors"
	"net"
	"os"
	"testing"
	"time"
)

// deadlineConn records the write deadlines set on it.
type deadlineConn struct {
	net.Conn
	sets []time.Time
}

func (c *deadlineConn) SetWriteDeadline(t time.Time) error {
	c.sets = append(c.sets, t)
	return nil
}

func (c *deadlineConn) Write(b []byte) (int, error) { return len(b), nil }

// A keep-alive's requests, each asking for a write deadline a minute away
// and none after it (as the HTTP front and net/http do), set it on the
// socket once, not twice a request.
func TestWriteDeadlineKeptAcrossRequests(t *testing.T) {
	inner := &deadlineConn{}
	c := &limitedConn{Conn: inner}
	for range 100 {
		c.SetWriteDeadline(time.Now().Add(time.Minute))
		c.Write([]byte("answer"))
		c.SetWriteDeadline(time.Time{})
	}
	if len(inner.sets) != 1 {
		t.Fatalf("the socket's write deadline was set %d times for 100 requests, want once", len(inner.sets))
	}
}

// A deadline earlier than the one on the socket, or later by more than a
// 16th of the time left to it, is set.
func TestWriteDeadlineSetWhenTheOneThereWouldNotDo(t *testing.T) {
	inner := &deadlineConn{}
	c := &limitedConn{Conn: inner}
	now := time.Now()
	for _, d := range []time.Duration{time.Minute, time.Second, 2 * time.Minute, 2*time.Minute + time.Second} {
		c.SetWriteDeadline(now.Add(d))
	}
	want := []time.Time{now.Add(time.Minute), now.Add(time.Second), now.Add(2 * time.Minute)}
	if len(inner.sets) != len(want) {
		t.Fatalf("set %v, want %v", inner.sets, want)
	}
	for i := range want {
		if !inner.sets[i].Equal(want[i]) {
			t.Fatalf("set %v, want %v", inner.sets, want)
		}
	}
}

// A deadline whose removal was asked for is off the socket before the
// next write: one that passed meanwhile does not fail it.
func TestWriteDeadlineLiftedBeforeTheNextWrite(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		conn, _ := ln.Accept()
		accepted <- conn
	}()
	client, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	server := <-accepted
	if server == nil {
		t.Fatal("no connection accepted")
	}
	defer server.Close()
	c := &limitedConn{Conn: server}
	c.SetWriteDeadline(time.Now().Add(-time.Second)) // passed: set, and a write fails
	if _, err := c.Write([]byte("x")); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("a write past the deadline: %v, want it to fail", err)
	}
	c.SetWriteDeadline(time.Time{})
	if _, err := c.Write([]byte("x")); err != nil {
		t.Fatalf("a write once the deadline was lifted: %v", err)
	}
}
