package httpfront

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate/proxy"
)

// lockedBuffer is a log destination the test reads while the server writes.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// startUpload sends a POST's headers and the start of its body, then
// stalls: a slow upload, which the front reads until its deadline.
func startUpload(t *testing.T, addr, headers string, length int) net.Conn {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	fmt.Fprintf(conn, "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n%sContent-Length: %d\r\n\r\n{\"jsonrpc\":", headers, length)
	return conn
}

// answerTo reads the answer to the request sent on conn. The deadline is a
// generous limit for the event; the front's own body deadline is longer.
func answerTo(t *testing.T, conn net.Conn) (*http.Response, string) {
	t.Helper()
	conn.SetReadDeadline(time.Now().Add(20 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("no answer while the body is not sent: %v", err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	return resp, string(body)
}

// Bodies being read at once are bounded in bytes: past the budget a POST
// is refused at once with 503 and a JSON-RPC error (its id is not known:
// the body is not read), the episode is logged once, and once reads end
// bodies are read again (review 1, finding 14b).
func TestBodyBudget(t *testing.T) {
	var logged lockedBuffer
	opts := proxy.Options{StartupWait: time.Millisecond, Logger: slog.New(slog.NewTextHandler(&logged, nil))}
	const upload = 1 << 20
	front, ts := newTestFront(t, opts, func(f *Front) { f.bodies.max = 3 * upload })
	addr := ts.Listener.Addr().String()
	var slow []net.Conn
	for range 3 {
		slow = append(slow, startUpload(t, addr, "", upload))
	}
	waitReading(t, front, 3*upload)

	for range 2 {
		resp, body := answerTo(t, startUpload(t, addr, "", upload))
		if resp.StatusCode != http.StatusServiceUnavailable || !strings.Contains(body, `"id":null`) || !strings.Contains(body, "request bodies") {
			t.Fatalf("past the budget: %s %s, want 503 with a JSON-RPC error", resp.Status, body)
		}
	}
	if n := strings.Count(logged.String(), "request bodies"); n != 1 {
		t.Errorf("the episode was logged %d times, want once:\n%s", n, logged.String())
	}

	slow[0].Close()
	waitReading(t, front, 2*upload)
	initialize(t, ts)
}

// waitReading waits for the front to be reading want bytes of bodies.
func waitReading(t *testing.T, f *Front, want int64) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for f.bodies.inUse() != want {
		if time.Now().After(deadline) {
			t.Fatalf("the front reads %d bytes of bodies, want %d", f.bodies.inUse(), want)
		}
		time.Sleep(time.Millisecond) // polling for the server's reads to begin or end
	}
}

// A POST naming an unknown session is answered 404 before its body is
// read (review 1, finding 14b).
func TestUnknownSessionBeforeBody(t *testing.T) {
	_, ts := newTestFront(t, proxy.Options{}, nil)
	resp, body := answerTo(t, startUpload(t, ts.Listener.Addr().String(), "Mcp-Session-Id: nope\r\n", 1<<20))
	if resp.StatusCode != http.StatusNotFound {
		t.Fatalf("got %s %s, want 404 at once", resp.Status, body)
	}
}
