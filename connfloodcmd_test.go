package main

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/rogpeppe/go-internal/testscript"
)

// urlAndCount reads the arguments URL N of a command that takes them
// (usage, on any other, fails the script).
func urlAndCount(ts *testscript.TestScript, neg bool, args []string, usage string) (*url.URL, int) {
	if len(args) != 2 || neg {
		ts.Fatalf("usage: %s", usage)
	}
	u, err := url.Parse(args[0])
	ts.Check(err)
	n, err := strconv.Atoi(args[1])
	ts.Check(err)
	return u, n
}

// cmdConnFlood: conn-flood URL N — opens N connections to URL's host one
// after another, each with one keep-alive GET of URL answered, and keeps
// them all open: a client hoarding idle connections. It succeeds if the
// server closed the first of them (within 60s) and still answers on the
// last.
func cmdConnFlood(ts *testscript.TestScript, neg bool, args []string) {
	u, n := urlAndCount(ts, neg, args, "conn-flood URL N")
	type kept struct {
		conn net.Conn
		r    *bufio.Reader
	}
	conns := make([]kept, 0, n)
	defer func() {
		for _, c := range conns {
			c.conn.Close()
		}
	}()
	get := func(c kept) error {
		fmt.Fprintf(c.conn, "GET %s HTTP/1.1\r\nHost: %s\r\n\r\n", u.RequestURI(), u.Host)
		resp, err := http.ReadResponse(c.r, nil)
		if err != nil {
			return err
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("status %d", resp.StatusCode)
		}
		return nil
	}
	for i := range n {
		conn, err := net.Dial("tcp", u.Host)
		if err != nil {
			ts.Fatalf("conn-flood: connection %d: %v", i+1, err)
		}
		c := kept{conn, bufio.NewReader(conn)}
		conns = append(conns, c)
		if err := get(c); err != nil {
			ts.Fatalf("conn-flood: connection %d: %v", i+1, err)
		}
	}
	first := conns[0].conn
	first.SetReadDeadline(time.Now().Add(60 * time.Second))
	if _, err := first.Read(make([]byte, 1)); err != io.EOF {
		ts.Fatalf("conn-flood: the first of %d connections is still open (read: %v)", n, err)
	}
	if err := get(conns[n-1]); err != nil {
		ts.Fatalf("conn-flood: the last connection: %v", err)
	}
}
