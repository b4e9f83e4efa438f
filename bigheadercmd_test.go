package main

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"

	"github.com/rogpeppe/go-internal/testscript"
)

// cmdBigHeader: big-header URL BYTES — sends a GET for URL whose headers
// hold a header of BYTES bytes, written as it goes (a client that does not
// stop at any limit), and prints the answer's status: "status 431". The
// answer is read to its end: a reset in its place (the server closing
// without a half-close first) fails the command.
func cmdBigHeader(ts *testscript.TestScript, neg bool, args []string) {
	u, size := urlAndCount(ts, neg, args, "big-header URL BYTES")
	conn, err := net.Dial("tcp", u.Host)
	ts.Check(err)
	defer conn.Close()
	// Written on its own: the server may answer and close before all of
	// it is sent, and the answer is what is printed.
	go func() {
		fmt.Fprintf(conn, "GET %s HTTP/1.1\r\nHost: %s\r\nX-Big: ", u.RequestURI(), u.Host)
		chunk := strings.Repeat("a", 4096)
		for left := size; left > 0; left -= len(chunk) {
			if _, err := conn.Write([]byte(chunk[:min(left, len(chunk))])); err != nil {
				return
			}
		}
		conn.Write([]byte("\r\n\r\n"))
	}()
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	ts.Check(err)
	_, err = io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		ts.Fatalf("the answer (status %d) did not end: %v", resp.StatusCode, err)
	}
	fmt.Fprintln(ts.Stdout(), "status", resp.StatusCode)
}
