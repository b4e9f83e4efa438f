package jsonrpc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
	"time"
)

// failAfterEOFStream reads nothing but EOF, and fails every write only once
// the connection's reader has ended: the order in which an upstream dies
// mid-write.
type failAfterEOFStream struct {
	conn *Conn
}

func (s *failAfterEOFStream) Read() ([]byte, error) { return nil, io.EOF }
func (s *failAfterEOFStream) Write(ctx context.Context, msg []byte) error {
	<-s.conn.Done()
	return errors.New("broken pipe")
}
func (s *failAfterEOFStream) Close() error { return nil }

// A write that fails while the reader is retiring every call must never
// return a nil call with a nil error (the caller would dereference it), and
// must not race with the retirement (go test -race).
func TestGoWhenWriteFailsAfterReaderEnded(t *testing.T) {
	for range 50 {
		s := &failAfterEOFStream{}
		c := NewConn(s, Options{})
		s.conn = c
		var wg sync.WaitGroup
		for range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				call, err := c.Go(context.Background(), "m", nil)
				if call == nil && err == nil {
					t.Error("Go returned neither a call nor an error")
				}
				if call != nil {
					if _, err := call.Wait(context.Background()); err == nil {
						t.Error("a call on a dead connection succeeded")
					}
				}
			}()
		}
		c.Start()
		wg.Wait()
	}
}

// memStream is a stream fed from a channel, recording what is written.
type memStream struct {
	in      chan []byte
	mu      sync.Mutex
	written []string
	wrote   chan struct{} // poked on every write
	closed  chan struct{}
	once    sync.Once
}

func newMemStream() *memStream {
	return &memStream{in: make(chan []byte, 16), wrote: make(chan struct{}, 1), closed: make(chan struct{})}
}

func (s *memStream) Read() ([]byte, error) {
	select {
	case m := <-s.in:
		return m, nil
	case <-s.closed:
		return nil, io.EOF
	}
}

func (s *memStream) Write(ctx context.Context, msg []byte) error {
	s.mu.Lock()
	s.written = append(s.written, string(msg))
	s.mu.Unlock()
	select {
	case s.wrote <- struct{}{}:
	default:
	}
	return nil
}

func (s *memStream) Close() error {
	s.once.Do(func() { close(s.closed) })
	return nil
}

func (s *memStream) all() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.written...)
}

// An over-size response to a pending call fails that call at once, naming
// the size, and is reported; the peer is not answered as if it had sent a
// request.
func TestOverSizeResponseFailsTheCall(t *testing.T) {
	for _, tc := range []struct{ name, line string }{
		{"result", `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"` + strings.Repeat("x", 300) + `"}]}}`},
		{"error", `{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"` + strings.Repeat("x", 300) + `"}}`},
		{"no keys past the id", `{"id":1,"jsonrpc":"2.0","result":"` + strings.Repeat("x", 300) + `"}`},
		{"id spelt another way", `{"jsonrpc":"2.0","id":1.0,"result":{"content":[{"type":"text","text":"` + strings.Repeat("x", 300) + `"}]}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pr, pw := io.Pipe()
			out := newMemStream()
			var bad []error
			var badMu sync.Mutex
			s := &splitStream{read: NewLineStream(pr, io.Discard, pr, 100), write: out}
			c := NewConn(s, Options{OnBadInput: func(err error) { badMu.Lock(); bad = append(bad, err); badMu.Unlock() }}).Start()
			defer c.Close()
			call, err := c.Go(context.Background(), "tools/call", nil)
			if err != nil {
				t.Fatal(err)
			}
			go io.WriteString(pw, tc.line+"\n")
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			_, err = call.Wait(ctx)
			var tl *TooLargeError
			if !errors.As(err, &tl) || tl.Limit != 100 {
				t.Fatalf("call failed with %v, want a *TooLargeError naming the limit", err)
			}
			if !strings.Contains(err.Error(), "bytes") {
				t.Fatalf("error %q does not name the size", err)
			}
			for _, w := range out.all() {
				if strings.Contains(w, `"error"`) {
					t.Fatalf("the peer was answered as if its response were a request: %s", w)
				}
			}
			badMu.Lock()
			defer badMu.Unlock()
			if len(bad) != 1 {
				t.Fatalf("reported %d times (%v), want once", len(bad), bad)
			}
		})
	}
}

// splitStream reads from one stream and writes to another.
type splitStream struct {
	read  Stream
	write Stream
}

func (s *splitStream) Read() ([]byte, error)                       { return s.read.Read() }
func (s *splitStream) Write(ctx context.Context, msg []byte) error { return s.write.Write(ctx, msg) }
func (s *splitStream) Close() error                                { s.write.Close(); return s.read.Close() }

// An over-size request is still answered with an error carrying its id.
func TestOverSizeRequestAnswered(t *testing.T) {
	pr, pw := io.Pipe()
	out := newMemStream()
	c := NewConn(&splitStream{read: NewLineStream(pr, io.Discard, pr, 100), write: out}, Options{}).Start()
	defer c.Close()
	go io.WriteString(pw, `{"jsonrpc":"2.0","id":"big","method":"tools/call","params":{"x":"`+strings.Repeat("x", 300)+`"}}`+"\n")
	waitWritten(t, out, 1)
	if w := out.all()[0]; !strings.Contains(w, `"id":"big"`) || !strings.Contains(w, "-32600") {
		t.Fatalf("answer = %s", w)
	}
}

func waitWritten(t *testing.T, s *memStream, n int) {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for len(s.all()) < n {
		select {
		case <-s.wrote:
		case <-deadline:
			t.Fatalf("%d messages written, want %d: %q", len(s.all()), n, s.all())
		}
	}
}

// Past MaxInFlight, a request is answered at once with an error and no
// handler runs for it; requests within the bound are served as usual.
func TestMaxInFlight(t *testing.T) {
	out := newMemStream()
	release := make(chan struct{})
	var started sync.WaitGroup
	started.Add(3)
	c := NewConn(out, Options{
		MaxInFlight: 3,
		Handler: HandlerFunc(func(ctx context.Context, m *Message) (json.RawMessage, error) {
			started.Done()
			<-release
			return json.RawMessage(`{}`), nil
		}),
	}).Start()
	defer c.Close()
	for i := range 10 {
		out.in <- []byte(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"sampling/createMessage"}`, i))
	}
	started.Wait()
	waitWritten(t, out, 7)
	for _, w := range out.all() {
		if !strings.Contains(w, "too many requests in flight") {
			t.Fatalf("answer %s, want a refusal", w)
		}
	}
	close(release)
	waitWritten(t, out, 10)
}

// A line that is not JSON is answered with a parse error and a null id when
// the connection answers unreadable input (a server does, JSON-RPC says so);
// otherwise it is only reported.
func TestParseErrorAnsweredWithNullID(t *testing.T) {
	for _, answer := range []bool{true, false} {
		out := newMemStream()
		var bad []error
		var mu sync.Mutex
		c := NewConn(out, Options{AnswerUnreadable: answer, OnBadInput: func(err error) { mu.Lock(); bad = append(bad, err); mu.Unlock() }}).Start()
		out.in <- []byte(`this is not JSON`)
		out.in <- []byte(`{"jsonrpc":"2.0","id":1,"method":"ping"}`)
		if answer {
			waitWritten(t, out, 2)
			if w := out.all()[0]; w != `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error: not JSON"}}` {
				t.Fatalf("answer to garbage = %s", w)
			}
		} else {
			waitWritten(t, out, 1)
			if w := out.all()[0]; !strings.Contains(w, `"id":1`) {
				t.Fatalf("garbage was answered: %s", w)
			}
		}
		c.Close()
		mu.Lock()
		if len(bad) != 1 {
			t.Errorf("answer=%v: reported %d times, want once", answer, len(bad))
		}
		mu.Unlock()
	}
}
