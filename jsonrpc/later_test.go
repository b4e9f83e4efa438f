package jsonrpc

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"sync/atomic"
	"testing"
)

// noWaitStream is a line stream that takes messages without waiting,
// unless full says it has no room.
type noWaitStream struct {
	Stream
	full atomic.Bool
}

func (s *noWaitStream) WriteNoWait(msg []byte, related ID, final bool, _ *Cork) (bool, error) {
	if s.full.Load() {
		return false, nil
	}
	return true, s.Write(context.Background(), msg)
}

// completionFunc adapts a function to Completion.
type completionFunc func(*Cork)

func (f completionFunc) Completed(cork *Cork) { f(cork) }

// inlinePair connects a client to a server whose requests are all taken by
// inline, which gets each Reply on the server's reader.
func inlinePair(t *testing.T, inline func(ctx context.Context, msg *Message, r *Reply) bool) (client, server *Conn, serverStream *noWaitStream) {
	t.Helper()
	cr, sw := io.Pipe()
	sr, cw := io.Pipe()
	serverStream = &noWaitStream{Stream: NewLineStream(sr, sw, multiCloser{sr, sw}, 0)}
	client = NewConn(&noWaitStream{Stream: NewLineStream(cr, cw, multiCloser{cr, cw}, 0)}, Options{}).Start()
	inlineCorked := func(ctx context.Context, msg *Message, r *Reply, _ *Cork) bool { return inline(ctx, msg, r) }
	server = NewConn(serverStream, Options{Inline: inlineCorked, Handler: HandlerFunc(func(ctx context.Context, m *Message) (json.RawMessage, error) {
		return json.RawMessage(`"handler"`), nil
	})}).Start()
	t.Cleanup(func() { client.Close(); server.Close() })
	return client, server, serverStream
}

func TestInlineRequestAnsweredLater(t *testing.T) {
	replies := make(chan *Reply, 1)
	client, server, _ := inlinePair(t, func(ctx context.Context, msg *Message, r *Reply) bool {
		if msg.Method != "later" {
			return false
		}
		replies <- r
		return true
	})
	ctx := watchdog(t)
	call, err := client.Go(ctx, "later", nil)
	if err != nil {
		t.Fatal(err)
	}
	r := <-replies
	if res, err := client.Call(ctx, "now", nil); err != nil || string(res) != `"handler"` {
		t.Fatalf("a declined request = %s, %v; want the handler's answer", res, err)
	}
	cancelled, stop := context.WithCancel(ctx)
	stop()
	if err := server.Wait(cancelled); err == nil {
		t.Fatal("Wait returned at once while a reply was pending; it must wait for it")
	}
	r.Answer(json.RawMessage(`"later"`), nil, nil)
	if res, err := call.Wait(ctx); err != nil || string(res) != `"later"` {
		t.Fatalf("answered later = %s, %v", res, err)
	}
	if err := server.Wait(ctx); err != nil {
		t.Fatalf("Wait after the answer: %v", err)
	}
}

func TestInlineRequestCancelledByPeerIsNotAnswered(t *testing.T) {
	type taken struct {
		ctx context.Context
		id  ID
		r   *Reply
	}
	replies := make(chan taken, 2)
	client, server, _ := inlinePair(t, func(ctx context.Context, msg *Message, r *Reply) bool {
		replies <- taken{ctx, msg.ID, r}
		return true
	})
	ctx := watchdog(t)
	first, err := client.Go(ctx, "first", nil)
	if err != nil {
		t.Fatal(err)
	}
	f := <-replies
	ended := make(chan struct{})
	context.AfterFunc(f.ctx, func() { close(ended) })
	if !server.CancelIncoming(f.id) {
		t.Fatal("CancelIncoming found no request in flight for a pending reply")
	}
	<-ended
	f.r.Answer(json.RawMessage(`"first"`), nil, nil)
	second, err := client.Go(ctx, "second", nil)
	if err != nil {
		t.Fatal(err)
	}
	s := <-replies
	s.r.Answer(json.RawMessage(`"second"`), nil, nil)
	if _, err := second.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	select {
	case <-first.Done():
		t.Fatal("a request the peer cancelled was answered")
	default:
	}
}

func TestGoNoWaitThen(t *testing.T) {
	answers := make(chan *Reply, 1)
	client, _, _ := inlinePair(t, func(ctx context.Context, msg *Message, r *Reply) bool {
		answers <- r
		return true
	})
	ctx := watchdog(t)
	call, err := client.GoNoWait(ctx, nil, "m", nil)
	if err != nil {
		t.Fatal(err)
	}
	ran := make(chan json.RawMessage, 1)
	if !call.Then(completionFunc(func(*Cork) {
		res, err := call.Wait(context.Background()) // done: returns at once
		if err != nil {
			t.Error(err)
		}
		ran <- res
	})) {
		t.Fatal("Then on a call not yet answered reported it done")
	}
	(<-answers).Answer(json.RawMessage(`"ok"`), nil, nil)
	if res := <-ran; string(res) != `"ok"` {
		t.Fatalf("then saw %s", res)
	}
	if call.Then(completionFunc(func(*Cork) { t.Error("then ran for a call done already") })) {
		t.Fatal("Then on a call done already reported it pending")
	}
}

func TestGoNoWaitThenRunsOnAbandonAndClose(t *testing.T) {
	client, _, _ := inlinePair(t, func(ctx context.Context, msg *Message, r *Reply) bool { return true })
	ctx := watchdog(t)
	giveUp := errors.New("given up")
	abandoned, _ := client.GoNoWait(ctx, nil, "a", nil)
	closed, _ := client.GoNoWait(ctx, nil, "b", nil)
	errs := make(chan error, 2)
	for _, call := range []*Call{abandoned, closed} {
		call.Then(completionFunc(func(*Cork) { _, err := call.Wait(context.Background()); errs <- err }))
	}
	abandoned.Abandon(giveUp)
	if err := <-errs; !errors.Is(err, giveUp) {
		t.Fatalf("then after Abandon saw %v", err)
	}
	client.Close()
	if err := <-errs; !errors.Is(err, ErrClosed) {
		t.Fatalf("then after Close saw %v", err)
	}
}

func TestGoNoWaitSendsNothingWhenItWouldWait(t *testing.T) {
	client, _, _ := inlinePair(t, func(ctx context.Context, msg *Message, r *Reply) bool {
		r.Answer(json.RawMessage(`"ok"`), nil, nil)
		return true
	})
	client.stream.(*noWaitStream).full.Store(true)
	if _, err := client.GoNoWait(context.Background(), nil, "m", nil); !errors.Is(err, ErrWouldWait) {
		t.Fatalf("GoNoWait on a full stream: %v, want ErrWouldWait", err)
	}
	client.mu.Lock()
	n := len(client.pending)
	client.mu.Unlock()
	if n != 0 {
		t.Fatalf("%d calls pending after a GoNoWait that sent nothing", n)
	}
	client.stream.(*noWaitStream).full.Store(false)
	if res, err := client.Call(watchdog(t), "m", nil); err != nil || string(res) != `"ok"` {
		t.Fatalf("the next call = %s, %v", res, err)
	}
}

func TestReplyAnswerWrittenByGoroutineWhenStreamWouldWait(t *testing.T) {
	client, _, serverStream := inlinePair(t, func(ctx context.Context, msg *Message, r *Reply) bool {
		r.Answer(json.RawMessage(`"ok"`), nil, nil) // on the reader: must not wait
		return true
	})
	serverStream.full.Store(true)
	if res, err := client.Call(watchdog(t), "m", nil); err != nil || string(res) != `"ok"` {
		t.Fatalf("answer when the stream would wait = %s, %v", res, err)
	}
}

// Then and a completion racing it finish the call exactly once: either
// Then registers the hook and the completion tells it, or Then reports
// false and the call is over when it returns (its caller goes on
// itself). Both the reader's delivery and the retirement of every pending
// call (which completes calls after taking them out of pending) race it.
// (Then returned at once for a call being retired, and the caller,
// finding it not over, lost the call.)
func TestThenAndACompletionFinishTheCallOnce(t *testing.T) {
	for i := range 2000 {
		c := &Conn{pending: map[ID]*Call{}}
		call, err := c.newCall()
		if err != nil {
			t.Fatal(err)
		}
		var told atomic.Int32
		start := make(chan struct{})
		completed := make(chan struct{})
		go func() {
			<-start
			if i%2 == 0 {
				c.deliver(call.ID(), json.RawMessage(`"ok"`), nil)
			} else {
				c.retireAll(io.EOF)
			}
			close(completed)
		}()
		close(start)
		registered := call.Then(completionFunc(func(*Cork) { told.Add(1) }))
		overAtReturn := call.Over()
		<-completed
		switch n := told.Load(); {
		case registered && n != 1:
			t.Fatalf("round %d: Then registered the hook, which was told %d times, want once", i, n)
		case !registered && (n != 0 || !overAtReturn):
			t.Fatalf("round %d: Then declined; the hook told %d times (want 0), the call over when it returned: %v (want true)", i, n, overAtReturn)
		}
	}
}

// closingNoWaitStream is a noWaitStream that, once shut, fails every
// write as a closed outbox does.
type closingNoWaitStream struct {
	noWaitStream
	shut atomic.Bool
}

func (s *closingNoWaitStream) WriteNoWait(msg []byte, related ID, final bool, cork *Cork) (bool, error) {
	if s.shut.Load() {
		return false, ErrClosed
	}
	return s.noWaitStream.WriteNoWait(msg, related, final, cork)
}

func (s *closingNoWaitStream) Write(ctx context.Context, msg []byte) error {
	if s.shut.Load() {
		return ErrClosed
	}
	return s.noWaitStream.Write(ctx, msg)
}

// A peer that left with many requests in flight costs one report of the
// closed stream, whether their answers went through Reply.Answer or a
// handler: one log line, not one per request.
func TestInlineAnswersToAClosedStreamAreReportedOnce(t *testing.T) {
	cr, sw := io.Pipe()
	sr, cw := io.Pipe()
	stream := &closingNoWaitStream{noWaitStream: noWaitStream{Stream: NewLineStream(sr, sw, multiCloser{sr, sw}, 0)}}
	replies := make(chan *Reply, 2)
	var reports atomic.Int32
	client := NewConn(NewLineStream(cr, cw, multiCloser{cr, cw}, 0), Options{}).Start()
	server := NewConn(stream, Options{
		Inline:     func(ctx context.Context, msg *Message, r *Reply, _ *Cork) bool { replies <- r; return true },
		OnBadInput: func(error) { reports.Add(1) },
	}).Start()
	t.Cleanup(func() { client.Close(); server.Close() })
	ctx := watchdog(t)
	for _, m := range []string{"a", "b"} {
		if _, err := client.Go(ctx, m, nil); err != nil {
			t.Fatal(err)
		}
	}
	first, second := <-replies, <-replies
	stream.shut.Store(true)
	first.Answer(json.RawMessage(`1`), nil, nil)
	second.Answer(json.RawMessage(`2`), nil, nil)
	if err := server.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	if n := reports.Load(); n != 1 {
		t.Fatalf("two answers to a closed stream were reported %d times; want once, as Conn.write reports them", n)
	}
}
