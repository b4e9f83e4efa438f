package main

import (
	"bufio"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate/config"
	"github.com/mcpgate/mcpgate/httpfront"
	"github.com/mcpgate/mcpgate/proxy"
)

// frontBehindLimit serves an HTTP front (a gateway with no server) behind a
// connLimit of max, wired as serveHTTP wires them.
func frontBehindLimit(t *testing.T, limit int) *connLimit {
	t.Helper()
	cfg := &config.Config{Servers: []config.Server{{Name: "idle", Type: config.TypeStdio, Command: "unused"}}} // never started
	g, err := proxy.New(cfg, proxy.Options{Logger: slog.New(slog.DiscardHandler), StartupWait: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	front := httpfront.New(g, ln.Addr().String())
	l := newConnLimit(ln, limit)
	srv := frontServer(front, l)
	served := make(chan error, 1)
	go func() { served <- srv.Serve(l) }()
	t.Cleanup(func() {
		srv.Close()
		front.Close()
		g.Close()
		<-served
	})
	return l
}

// At the connection limit, with every place held by a POST whose body
// stopped coming (headers whole, a byte of the body, then nothing), a new
// connection takes the place of the one whose body has made no progress
// the longest, once that is headerStall or more, as a connection trickling
// its headers would give it up. Such POSTs are active requests to
// net/http, which were never closed to make a place: a few thousand of
// them held every place for the body deadline (a minute), renewed at
// will, and no new client was served.
func TestConnLimitClosesAStalledBody(t *testing.T) {
	l := frontBehindLimit(t, 2)
	var stalled []net.Conn
	for range 2 {
		c := dial(t, l)
		fmt.Fprintf(c, "POST /mcp HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: 100\r\n\r\n{", l.Addr())
		stalled = append(stalled, c)
	}
	c := dial(t, l)
	c.SetDeadline(time.Now().Add(30 * time.Second)) // generous: a place comes free after headerStall
	fmt.Fprintf(c, "GET /healthz HTTP/1.1\r\nHost: %s\r\n\r\n", l.Addr())
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("a new client at the limit held by stalled bodies: %v", err)
	}
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("healthz: %s %s", resp.Status, body)
	}
	wantClosed(t, stalled[0], "the connection whose body stalled longest")
}
