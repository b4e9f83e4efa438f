package jsonrpc

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
)

// eventLog records what happened, in order, across goroutines.
type eventLog struct {
	mu     sync.Mutex
	events []string
	added  chan struct{} // 1-buffered: told of each event
}

func (l *eventLog) add(e string) {
	l.mu.Lock()
	l.events = append(l.events, e)
	l.mu.Unlock()
	select {
	case l.added <- struct{}{}:
	default:
	}
}

// await waits until the log reads want, and fails if it grows past it.
func (l *eventLog) await(t *testing.T, ctx context.Context, want string) {
	t.Helper()
	for {
		l.mu.Lock()
		got := strings.Join(l.events, " ")
		l.mu.Unlock()
		if got == want {
			return
		}
		if !strings.HasPrefix(want, got) {
			t.Fatalf("events: %s; want %s", got, want)
		}
		select {
		case <-l.added:
		case <-ctx.Done():
			t.Fatalf("events after the watchdog: %s; want %s", got, want)
		}
	}
}

// holder is a destination that holds writes for a cork.
type holder struct{ log *eventLog }

func (h holder) FlushCork() { h.log.add("flush") }

// The requests one read brought are all handled, with the reader's cork,
// before the cork is flushed, once, before the reader reads again; a
// request that came alone is flushed right after it.
func TestReaderFlushesItsCorkBeforeItReadsAgain(t *testing.T) {
	ctx := watchdog(t)
	log := &eventLog{added: make(chan struct{}, 1)}
	sr, cw := io.Pipe()
	server := NewConn(NewLineStream(sr, io.Discard, sr, 0), Options{
		Inline: func(ctx context.Context, msg *Message, r *Reply, cork *Cork) bool {
			if cork == nil {
				t.Error("Inline on the reader of a line stream got no cork")
				return false
			}
			log.add(msg.Method)
			cork.Hold(holder{log})
			r.Answer(nil, nil, nil)
			return true
		},
	}).Start()
	defer server.Close()
	line := func(id int, method string) string {
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q}`+"\n", id, method)
	}
	if _, err := io.WriteString(cw, line(1, "a")+line(2, "b")+line(3, "c")); err != nil { // one read
		t.Fatal(err)
	}
	log.await(t, ctx, "a b c flush flush flush")
	if _, err := io.WriteString(cw, line(4, "d")); err != nil {
		t.Fatal(err)
	}
	log.await(t, ctx, "a b c flush flush flush d flush")
}

// A request the reader refuses is answered after what the cork holds is
// flushed: the reader may wait for that write.
func TestReaderFlushesItsCorkBeforeItAnswers(t *testing.T) {
	ctx := watchdog(t)
	log := &eventLog{added: make(chan struct{}, 1)}
	sr, cw := io.Pipe()
	held := make(chan *Reply, 1)
	server := NewConn(NewLineStream(sr, writerFunc(func(b []byte) (int, error) {
		log.add("write")
		return len(b), nil
	}), sr, 0), Options{
		Inline: func(ctx context.Context, msg *Message, r *Reply, cork *Cork) bool {
			log.add(msg.Method)
			cork.Hold(holder{log})
			held <- r // in flight: a second request with its id is refused
			return true
		},
	}).Start()
	defer server.Close()
	line := `{"jsonrpc":"2.0","id":1,"method":"a"}` + "\n"
	if _, err := io.WriteString(cw, line+line); err != nil {
		t.Fatal(err)
	}
	log.await(t, ctx, "a flush write")
	(<-held).Answer(nil, nil, nil)
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(b []byte) (int, error) { return f(b) }

func TestLinesWritten(t *testing.T) {
	msgs := [][]byte{[]byte("ab"), []byte("c"), []byte("def")}
	for _, c := range []struct{ n, whole, end int }{
		{0, 0, 0}, {2, 0, 0}, {3, 1, 3}, {4, 1, 3}, {5, 2, 5}, {8, 2, 5}, {9, 3, 9},
	} {
		if whole, end := linesWritten(msgs, c.n); whole != c.whole || end != c.end {
			t.Errorf("linesWritten(%d bytes) = %d, %d; want %d, %d", c.n, whole, end, c.whole, c.end)
		}
	}
}

// A nil cork holds nothing, as Hold says: a goroutine without a cork
// passes nil, and holding for it must not panic its caller.
func TestNilCorkHoldsNothing(t *testing.T) {
	log := &eventLog{added: make(chan struct{}, 1)}
	var k *Cork
	k.Hold(holder{log})
	k.Flush()
	if len(log.events) != 0 {
		t.Fatalf("a nil cork flushed: %v", log.events)
	}
}

// What the reader held when its peer's input ended (the last line had no
// newline) is flushed before the reader is done, and so is what a
// notification's handler follows: the handler may write, and wait.
func TestReaderFlushesItsCorkAtTheEndAndBeforeANotification(t *testing.T) {
	ctx := watchdog(t)
	log := &eventLog{added: make(chan struct{}, 1)}
	sr, cw := io.Pipe()
	server := NewConn(NewLineStream(sr, io.Discard, sr, 0), Options{
		Handler: HandlerFunc(func(ctx context.Context, msg *Message) (json.RawMessage, error) {
			log.add(msg.Method)
			return nil, nil
		}),
		Inline: func(ctx context.Context, msg *Message, r *Reply, cork *Cork) bool {
			log.add(msg.Method)
			cork.Hold(holder{log})
			r.Answer(nil, nil, nil)
			return true
		},
	}).Start()
	defer server.Close()
	in := `{"jsonrpc":"2.0","id":1,"method":"a"}` + "\n" +
		`{"jsonrpc":"2.0","method":"note"}` + "\n" +
		`{"jsonrpc":"2.0","id":2,"method":"b"}` // no newline: the end comes with it
	go func() {
		io.WriteString(cw, in)
		cw.Close()
	}()
	select {
	case <-server.Done():
	case <-ctx.Done():
		t.Fatal("the reader did not end")
	}
	log.await(t, ctx, "a flush note b flush")
}
