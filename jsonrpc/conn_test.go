package jsonrpc

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

// pair connects two Conns through pipes; h serves the "server" side.
func pair(t *testing.T, h Handler) (client, server *Conn) {
	t.Helper()
	cr, sw := io.Pipe()
	sr, cw := io.Pipe()
	client = NewConn(NewLineStream(cr, cw, multiCloser{cr, cw}, 0), Options{}).Start()
	server = NewConn(NewLineStream(sr, sw, multiCloser{sr, sw}, 0), Options{Handler: h}).Start()
	t.Cleanup(func() { client.Close(); server.Close() })
	return client, server
}

type multiCloser []io.Closer

func (m multiCloser) Close() error {
	for _, c := range m {
		c.Close()
	}
	return nil
}

// watchdog fails the test with every goroutine's stack instead of hanging.
func watchdog(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func TestSlowRequestDoesNotDelayNext(t *testing.T) {
	release := make(chan struct{})
	client, _ := pair(t, HandlerFunc(func(ctx context.Context, m *Message) (json.RawMessage, error) {
		if m.Method == "slow" {
			<-release
		}
		return json.RawMessage(`"` + m.Method + `"`), nil
	}))
	ctx := watchdog(t)
	slow, err := client.Go(context.Background(), "slow", nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := client.Call(ctx, "fast", nil)
	if err != nil || string(res) != `"fast"` {
		t.Fatalf("fast call = %s, %v while slow is pending", res, err)
	}
	close(release)
	if res, err := slow.Wait(ctx); err != nil || string(res) != `"slow"` {
		t.Fatalf("slow call = %s, %v", res, err)
	}
}

func TestCloseAnswersPendingCalls(t *testing.T) {
	block := make(chan struct{})
	defer close(block)
	client, server := pair(t, HandlerFunc(func(ctx context.Context, m *Message) (json.RawMessage, error) {
		<-block
		return nil, nil
	}))
	call, err := client.Go(context.Background(), "never", nil)
	if err != nil {
		t.Fatal(err)
	}
	server.Close() // the peer goes away: the reader sees EOF
	if _, err := call.Wait(watchdog(t)); !errors.Is(err, ErrClosed) {
		t.Fatalf("pending call after the peer closed: %v, want ErrClosed", err)
	}
	if _, err := client.Go(context.Background(), "after", nil); !errors.Is(err, ErrClosed) {
		t.Fatalf("call on a closed connection: %v, want ErrClosed", err)
	}
}

func TestCancelIncomingSuppressesResponse(t *testing.T) {
	started := make(chan ID, 1)
	client, server := pair(t, HandlerFunc(func(ctx context.Context, m *Message) (json.RawMessage, error) {
		if m.Method == "wait" {
			started <- m.ID
			<-ctx.Done()
			return nil, ctx.Err()
		}
		return json.RawMessage(`{}`), nil
	}))
	ctx := watchdog(t)
	call, _ := client.Go(context.Background(), "wait", nil)
	id := <-started
	if !server.CancelIncoming(id) {
		t.Fatal("CancelIncoming found no request in flight")
	}
	if server.CancelIncoming(IntID(999)) {
		t.Fatal("CancelIncoming of an unknown id reported success")
	}
	// Once the server's handler is done, whatever it would write is on the
	// wire before the next call's answer.
	if err := server.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := client.Call(ctx, "next", nil); err != nil {
		t.Fatal(err)
	}
	if call.Over() {
		t.Fatalf("cancelled request was answered: %s, %v", call.result, call.err)
	}
}

func TestWaitRetiresCall(t *testing.T) {
	client, _ := pair(t, HandlerFunc(func(ctx context.Context, m *Message) (json.RawMessage, error) {
		<-ctx.Done()
		return nil, ctx.Err()
	}))
	ctx, cancel := context.WithCancel(context.Background())
	call, _ := client.Go(context.Background(), "wait", nil)
	cancel()
	if _, err := call.Wait(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("Wait after cancel = %v", err)
	}
	if client.isPending(call.ID()) {
		t.Fatal("an abandoned call stays pending; a late answer would find it")
	}
}

// A late answer to a call the caller gave up on (its Wait's context ended,
// or it was abandoned) is expected and dropped quietly; an answer to an id
// never used is reported as bad input.
func TestLateAnswerToAbandonedCall(t *testing.T) {
	t.Run("wait", func(t *testing.T) {
		testLateAnswer(t, func(call *Call) {
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			call.Wait(ctx)
		})
	})
	t.Run("abandon", func(t *testing.T) {
		testLateAnswer(t, func(call *Call) {
			errGaveUp := errors.New("gave up")
			if !call.Abandon(errGaveUp) {
				t.Fatal("Abandon of a call waiting for its answer reported it answered")
			}
			if _, err := call.Wait(context.Background()); err != errGaveUp {
				t.Fatalf("Wait after Abandon = %v, want its error", err)
			}
			if call.Abandon(errGaveUp) {
				t.Fatal("a call abandoned twice")
			}
		})
	})
}

func testLateAnswer(t *testing.T, giveUp func(*Call)) {
	cr, sw := io.Pipe()
	sr, cw := io.Pipe()
	bad := make(chan error, 4)
	late := make(chan ID, 4)
	client := NewConn(NewLineStream(cr, cw, multiCloser{cr, cw}, 0), Options{
		OnBadInput: func(err error) { bad <- err },
		LateAnswer: func(id ID) { late <- id },
	}).Start()
	release := make(chan struct{})
	server := NewConn(NewLineStream(sr, sw, multiCloser{sr, sw}, 0), Options{Handler: HandlerFunc(func(ctx context.Context, m *Message) (json.RawMessage, error) {
		<-release
		return json.RawMessage(`{}`), nil
	})}).Start()
	defer client.Close()
	defer server.Close()

	call, _ := client.Go(context.Background(), "slow", nil)
	giveUp(call)
	close(release) // the server answers anyway
	if err := server.Wait(watchdog(t)); err != nil {
		t.Fatal(err) // the late answer is on the wire before what follows
	}
	// An answer nobody asked for, then a call that must still work.
	server.stream.Write(context.Background(), []byte(`{"jsonrpc":"2.0","id":424242,"result":{}}`))
	if _, err := client.Call(watchdog(t), "next", nil); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-bad:
		if !strings.Contains(err.Error(), "424242") {
			t.Fatalf("reported %v; the abandoned call's late answer must not be", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the answer to an unknown id was not reported")
	}
	select {
	case err := <-bad:
		t.Fatalf("also reported: %v", err)
	default:
	}
	// The owner is told of the late answer: it may forget the call now.
	select {
	case id := <-late:
		if id != call.ID() {
			t.Fatalf("LateAnswer told of %s, want the abandoned call's %s", id, call.ID())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("LateAnswer was not told of the abandoned call's answer")
	}
}

// Requests one after another are served by the goroutines that served the
// ones before (their stacks already grown), not by a new goroutine each.
func TestHandlerGoroutinesReused(t *testing.T) {
	var mu sync.Mutex
	seen := map[string]bool{}
	client, _ := pair(t, HandlerFunc(func(ctx context.Context, m *Message) (json.RawMessage, error) {
		buf := make([]byte, 64)
		id, _, _ := strings.Cut(strings.TrimPrefix(string(buf[:runtime.Stack(buf, false)]), "goroutine "), " ")
		mu.Lock()
		seen[id] = true
		mu.Unlock()
		return json.RawMessage(`{}`), nil
	}))
	ctx := watchdog(t)
	const calls = 50
	for range calls {
		if _, err := client.Call(ctx, "x", nil); err != nil {
			t.Fatal(err)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	// The goroutine that answers may still be on its way back to waiting
	// when the next request comes: a few, not one per request.
	t.Logf("%d sequential requests ran on %d goroutines", calls, len(seen))
	if len(seen) > calls/5 {
		t.Errorf("%d sequential requests ran on %d goroutines; want the same few reused", calls, len(seen))
	}
}

// An idle handler goroutine ends idleHandlerTime after its last request,
// not after its first: the idle timer, not reset at every request, is
// armed again for what is left when it fires early.
func TestIdleHandlerEndsAfterItsLastRequest(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		client, server := pair(t, HandlerFunc(func(ctx context.Context, m *Message) (json.RawMessage, error) {
			return json.RawMessage(`{}`), nil
		}))
		call := func() {
			if _, err := client.Call(context.Background(), "x", nil); err != nil {
				t.Fatal(err)
			}
			synctest.Wait() // the handler is back to waiting
		}
		idle := func() int32 { return server.idleHandlers.Load() }
		call()
		if idle() != 1 {
			t.Fatalf("%d idle handlers after a request, want 1", idle())
		}
		time.Sleep(3 * time.Second)
		call() // 3s: the same goroutine, idle again from now
		time.Sleep(idleHandlerTime - time.Millisecond)
		synctest.Wait()
		if idle() != 1 {
			t.Fatalf("the idle handler ended %v after its first request and before %v idle since its last", 3*time.Second+idleHandlerTime, idleHandlerTime)
		}
		time.Sleep(2 * time.Millisecond)
		synctest.Wait()
		if idle() != 0 {
			t.Fatalf("%d idle handlers left %v after the last request, want none", idle(), idleHandlerTime)
		}
	})
}

// Wait returns only once no handler runs: never while one started before
// it still does, however others start and finish around it (the count is
// kept without the connection's lock; only its drop to 0 takes it).
func TestWaitOutlastsHandlersStartedBefore(t *testing.T) {
	for range 50 {
		c := &Conn{}
		const before = 4
		var stillRunning atomic.Int32
		stillRunning.Store(before)
		for range before {
			c.handlerStarted()
		}
		var churn sync.WaitGroup
		for range 2 {
			churn.Go(func() {
				for range 1000 {
					c.handlerStarted()
					c.handlerDone()
				}
			})
		}
		for range before {
			go func() {
				stillRunning.Add(-1)
				c.handlerDone()
			}()
		}
		if err := c.Wait(context.Background()); err != nil {
			t.Fatal(err)
		}
		if n := stillRunning.Load(); n != 0 {
			t.Fatalf("Wait returned with %d handlers started before it still running", n)
		}
		churn.Wait()
	}
}
