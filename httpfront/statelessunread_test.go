package httpfront

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// A plain tools/call served without a session (a StatelessCall) whose
// client stops reading its answer does not hold mcpgate's shutdown for
// the answer's write deadline: Close waits for the requests being served,
// as for a session's POST, and leaves the answers being written to
// http.Server.Shutdown, which bounds them. Close waited for the write
// itself: one client that read nothing held a replica's shutdown for the
// whole write timeout (a minute), past any terminationGracePeriodSeconds.
func TestStatelessUnreadAnswerDoesNotHoldClose(t *testing.T) {
	front, ts := newServedFront(t, "", func(f *Front) { f.writeTimeout = 10 * time.Minute })
	if resp := postModern(t, ts, "tools/list", "", `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{`+envelope+`}}`); resp.StatusCode != http.StatusOK {
		t.Fatalf("tools/list: %s", resp.Status)
	}

	// The answer carries the request's id: one of 8 MiB makes an answer
	// that no socket buffer takes whole, from a call small enough to go
	// inline (its params are a few bytes).
	conn, err := net.Dial("tcp", ts.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.(*net.TCPConn).SetReadBuffer(4 << 10)
	id := `"` + strings.Repeat("i", 8<<20) + `"`
	body := `{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{"name":"hello",` + envelope + `}}`
	go fmt.Fprintf(conn, "POST /mcp HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n"+
		"MCP-Protocol-Version: 2026-07-28\r\nMcp-Method: tools/call\r\nMcp-Name: hello\r\nContent-Length: %d\r\n\r\n%s",
		ts.Listener.Addr(), len(body), body)
	// Its first line says the answer is being written; then nothing more
	// is read.
	status, err := bufio.NewReader(conn).ReadString('\n')
	if err != nil || !strings.Contains(status, "200") {
		t.Fatalf("answer's status line %q, %v", status, err)
	}

	closed := make(chan struct{})
	go func() {
		front.Close()
		close(closed)
	}()
	select {
	case <-closed:
	case <-time.After(30 * time.Second): // generous: the write deadline is 10 minutes
		t.Fatal("Front.Close still waits for an answer its client does not read")
	}
}
