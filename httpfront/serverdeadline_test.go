package httpfront

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate/proxy"
)

// A server told to bound the bodies (BoundBodies, as mcpgate's is) bounds
// them with its ReadTimeout, and the front then sets no read deadline of
// its own (a timer's reset less on every request): a body that stalls
// past the server's ReadTimeout gets its connection closed, though the
// front's own bound (which would replace the server's) is an hour away.
func TestServerReadTimeoutBoundsBody(t *testing.T) {
	_, ts := newTestFrontServer(t, proxy.Options{}, func(f *Front) { f.bodyTimeout = time.Hour },
		func(f *Front, srv *http.Server) {
			f.BoundBodies(srv)
			if srv.ReadTimeout != time.Hour {
				t.Fatalf("BoundBodies set ReadTimeout %v, want the front's bound (1h)", srv.ReadTimeout)
			}
			srv.ReadTimeout = 50 * time.Millisecond
		})
	conn, err := net.Dial("tcp", ts.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	io.WriteString(conn, "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: 100\r\n\r\n{\"jsonrpc\":")
	// A generous limit for the event (the server closing the connection);
	// the body deadline itself is short.
	conn.SetReadDeadline(time.Now().Add(20 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("no answer: %v", err)
	}
	io.Copy(io.Discard, resp.Body)
	if _, err := conn.Read(make([]byte, 1)); err != io.EOF {
		t.Fatalf("the connection was not closed after the answer (%s): %v", resp.Status, err)
	}
}

// The server's ReadTimeout is lifted once the body is in, as the front's
// own deadline is: an answer that comes later than it is still delivered.
func TestServerReadTimeoutLiftedForTheAnswer(t *testing.T) {
	// initialize waits StartupWait for the upstreams, which never start.
	_, ts := newTestFrontServer(t, proxy.Options{StartupWait: 300 * time.Millisecond}, func(f *Front) { f.bodyTimeout = 50 * time.Millisecond },
		func(f *Front, srv *http.Server) { f.BoundBodies(srv) })
	body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
	req, _ := http.NewRequest(http.MethodPost, ts.URL+"/mcp", strings.NewReader(body))
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := ts.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	got, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(got), `"protocolVersion"`) {
		t.Fatalf("got %s %s, want the initialize result", resp.Status, got)
	}
}
