package httpfront

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
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
// bodies are read again (review 1, finding 14b). A body holds the budget
// for its buffer: here, half of each slow upload came, and its buffer
// grew to the whole (see TestStalledBodiesDoNotHoldTheBudget).
func TestBodyBudget(t *testing.T) {
	var logged lockedBuffer
	opts := proxy.Options{StartupWait: time.Millisecond, Logger: slog.New(slog.NewTextHandler(&logged, nil))}
	const upload = 1 << 20
	const held = upload + bytes.MinRead // its buffer, with room for the read that sees the end
	front, ts := newTestFront(t, opts, func(f *Front) { f.bodies.max = 3 * held })
	addr := ts.Listener.Addr().String()
	var slow []net.Conn
	for range 3 {
		conn := startUpload(t, addr, "", upload)
		conn.Write(bytes.Repeat([]byte{' '}, upload/2))
		slow = append(slow, conn)
	}
	waitReading(t, front, 3*held)

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
	waitReading(t, front, 2*held)
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

// offeredReader is a request body that records how much room each read
// offered, and gives its bytes in reads of at most step.
type offeredReader struct {
	data    []byte
	step    int
	read    int
	offered []int // len(p) of each read, by how many bytes had come before it
	arrived []int
}

func (r *offeredReader) Read(p []byte) (int, error) {
	r.offered = append(r.offered, len(p))
	r.arrived = append(r.arrived, r.read)
	if r.read == len(r.data) {
		return 0, io.EOF
	}
	n := copy(p[:min(len(p), r.step)], r.data[r.read:])
	r.read += n
	return n, nil
}

// The memory a body is read into follows what arrived, not what its
// Content-Length announced: a client that announces 16 MiB and sends a
// few bytes (then stalls for the body's minute) must not have the gateway
// allocate 16 MiB for it. A body that does come whole is read as before.
func TestBodyBufferFollowsArrivals(t *testing.T) {
	front, _ := newTestFront(t, proxy.Options{}, nil)
	limit := front.g.Config().MaxMessage
	for _, size := range []int{10, 4 << 10, 3 << 20, limit, limit + 5} {
		data := append([]byte(`{"jsonrpc":"2.0","method":"x","params":{"t":"`), bytes.Repeat([]byte{'a'}, max(0, size-50))...)
		data = append(data, `"}}`...)
		body := &offeredReader{data: data, step: 64 << 10}
		r := httptest.NewRequest(http.MethodPost, "/mcp", body)
		r.ContentLength = int64(len(data))
		got, ok := front.readBody(httptest.NewRecorder(), r)
		if len(data) <= limit && (!ok || !bytes.Equal(got, data)) {
			t.Fatalf("a body of %d bytes: read %d bytes, ok %v", len(data), len(got), ok)
		}
		if len(data) > limit && ok {
			t.Fatalf("a body of %d bytes over the limit %d was accepted", len(data), limit)
		}
		for i, room := range body.offered {
			// Generous: the first reads may have a megabyte ready, later
			// ones a few times what came.
			if bound := max(2<<20, 16*body.arrived[i]); room > bound {
				t.Fatalf("a body of %d bytes: after %d bytes came, a read offered %d bytes of buffer (more than %d)", len(data), body.arrived[i], room, bound)
			}
		}
	}
}

// A small body that announced its length is read into a buffer of that
// size (and the one byte the read that sees the end is offered), not one
// with room to spare: every request pays for what its buffer holds.
func TestSmallBodyBufferFitsIt(t *testing.T) {
	for _, size := range []int{1, 150, 4 << 10, bodyFirst} {
		data := bytes.Repeat([]byte{'a'}, size)
		for _, step := range []int{size, 7} { // as net/http gives it (the end with the last bytes), and in small reads
			got, err := readAnnouncedWithin(&offeredReader{data: data, step: step}, int64(size), 16<<20, nil)
			if err != nil || !bytes.Equal(got, data) {
				t.Fatalf("a body of %d bytes in reads of %d: read %d bytes, %v", size, step, len(got), err)
			}
			if cap(got) > size+1 {
				t.Errorf("a body of %d bytes was read into a buffer of %d", size, cap(got))
			}
		}
	}
}

// closeCounter is a request body that counts its closes.
type closeCounter struct {
	io.Reader
	closes int
}

func (c *closeCounter) Close() error { c.closes++; return nil }

// A body read to its end is closed by readBody: net/http, seeing it
// closed at its end, does not read it again before the answer (its
// discard of what a handler left costs a buffer and an allocation per
// request). One over the limit is left open: what is left of it is still
// on the wire, and net/http decides what becomes of the connection.
func TestBodyClosedOnceRead(t *testing.T) {
	front, _ := newTestFront(t, proxy.Options{}, nil)
	limit := front.g.Config().MaxMessage
	for _, tc := range []struct {
		size   int
		closed bool
	}{{100, true}, {limit + 5, false}} {
		body := &closeCounter{Reader: bytes.NewReader(bytes.Repeat([]byte{' '}, tc.size))}
		r := httptest.NewRequest(http.MethodPost, "/mcp", nil)
		r.Body, r.ContentLength = body, int64(tc.size)
		front.readBody(httptest.NewRecorder(), r)
		if got := body.closes > 0; got != tc.closed {
			t.Errorf("a body of %d bytes (limit %d): closed %v, want %v", tc.size, limit, got, tc.closed)
		}
	}
}

// The body budget's count, taken and given back by many POSTs at once,
// never passes its max and ends at zero: a reservation that fits is never
// lost to another's, and one that does not fit takes nothing.
func TestBodyBudgetUnderConcurrency(t *testing.T) {
	b := &bodyBudget{max: 1000}
	var wg sync.WaitGroup
	var over atomic.Int64
	for g := range 8 {
		wg.Go(func() {
			for i := range 2000 {
				n := int64(1 + (g*131+i*17)%300)
				if ok, _ := b.reserve(n); ok {
					if in := b.inUse(); in > b.max {
						over.Store(in)
					}
					b.release(n)
				}
			}
		})
	}
	wg.Wait()
	if in := over.Load(); in != 0 {
		t.Errorf("the budget of %d held %d at once", b.max, in)
	}
	if in := b.inUse(); in != 0 {
		t.Errorf("all given back, the budget still counts %d", in)
	}
	if ok, first := b.reserve(b.max + 1); ok || !first {
		t.Errorf("more than the budget: ok %v, first refusal %v; want refused, first", ok, first)
	}
	if ok, first := b.reserve(b.max + 1); ok || first {
		t.Errorf("refused again: ok %v, first %v; want refused, not first", ok, first)
	}
	if ok, _ := b.reserve(b.max); !ok {
		t.Error("the whole budget, free, was refused")
	}
	if _, first := b.reserve(1); !first {
		t.Error("after an allowed read, a refusal starts a new episode")
	}
}
