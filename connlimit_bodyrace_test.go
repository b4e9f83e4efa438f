package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"testing"
	"time"
)

// A connection that has just begun reading a body is not taken for one
// that stalled: its last progress, from a body read long before, is not
// read together with its new reading flag. (Read in the other order, the
// progress before the flag, a body that began between the two loads looked
// an hour quiet, and its connection was closed at the limit.) Many
// connections begin their bodies while stalledBody looks, over and over.
func TestConnLimitBodyJustBegunIsNotStalled(t *testing.T) {
	l := &connLimit{}
	for range 256 {
		c := &limitedConn{l: l, allAt: len(l.all)}
		l.all = append(l.all, c)
	}
	longAgo := time.Now().Add(-time.Hour).UnixNano()
	for round := range 2000 {
		for _, c := range l.all {
			c.reading.Store(false)
			c.progress.Store(longAgo) // a body read an hour ago
		}
		begun := make(chan struct{})
		go func() {
			defer close(begun)
			for _, c := range l.all {
				c.ReadingBody(true)
			}
		}()
		for looking := true; looking; {
			select {
			case <-begun:
				looking = false
			default:
			}
			l.mu.Lock()
			victim, _ := l.stalledBody()
			l.mu.Unlock()
			if victim != nil {
				t.Fatalf("round %d: connection %d, whose body just began, taken for one that stalled", round, victim.allAt)
			}
		}
	}
}

// An Accept that waits for a place while no connection reads headers or a
// body (every place serving a request) is told when one begins to read a
// body: it then closes that one once the body stalls, as it would had the
// body begun before it looked. Untold, it waited for a connection to go
// idle or close, and a body stalled in the place for as long as the
// server let it.
func TestConnLimitWaitingAcceptToldOfABodyBegun(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	l := newConnLimit(ln, 1)
	type connKey struct{}
	entered, begin := make(chan struct{}, 1), make(chan struct{})
	srv := &http.Server{ConnState: l.track,
		ConnContext: func(ctx context.Context, c net.Conn) context.Context { return context.WithValue(ctx, connKey{}, c) },
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method != http.MethodPost {
				io.WriteString(w, "ok")
				return
			}
			entered <- struct{}{}
			<-begin // a request served for a while before it reads its body
			lc := r.Context().Value(connKey{}).(*limitedConn)
			lc.ReadingBody(true)
			defer lc.ReadingBody(false)
			io.ReadAll(r.Body)
		})}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(l) }()
	t.Cleanup(func() {
		srv.Close()
		<-served
	})
	stalled := dial(t, l)
	fmt.Fprintf(stalled, "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{")
	<-entered
	c := dial(t, l)
	fmt.Fprintf(c, "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
	for deadline := time.Now().Add(time.Minute); ; {
		if l.waiting.Load() == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("Accept never waited for a place")
		}
		time.Sleep(time.Millisecond) // polling the listener's state
	}
	close(begin)
	c.SetReadDeadline(time.Now().Add(30 * time.Second)) // generous: the place comes free after headerStall
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("a new client at the limit held by a body that began after Accept looked: %v", err)
	}
	resp.Body.Close()
	wantClosed(t, stalled, "the connection whose body stalled")
}
