package proxy

import (
	"context"
	"io"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate/config"
	"github.com/mcpgate/mcpgate/jsonrpc"
)

// decodedStream is a client stream that decodes what it reads (as the HTTP
// front does): it hands over one request as a message, and counts the
// calls to Read, which would make it encode the message again for the
// session to decode.
type decodedStream struct {
	msgs    chan *jsonrpc.Message
	written chan []byte
	closed  chan struct{}
	reads   atomic.Int32
}

func (d *decodedStream) ReadMessage() (*jsonrpc.Message, []byte, error) {
	select {
	case m := <-d.msgs:
		return m, nil, nil
	case <-d.closed:
		return nil, nil, io.EOF
	}
}

func (d *decodedStream) Read() ([]byte, error) {
	d.reads.Add(1)
	m, raw, err := d.ReadMessage()
	if m != nil {
		return m.Encode(), nil
	}
	return raw, err
}

func (d *decodedStream) Write(ctx context.Context, msg []byte) error {
	select {
	case d.written <- msg:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (d *decodedStream) Close() error { return nil }

// A session takes the messages a client stream has decoded as they are: it
// does not have them encoded again to decode them a second time.
func TestSessionTakesDecodedMessages(t *testing.T) {
	cfg := &config.Config{Servers: []config.Server{{Name: "idle", Type: config.TypeStdio, Command: "unused"}}}
	g, err := New(cfg, Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	st := &decodedStream{msgs: make(chan *jsonrpc.Message, 1), written: make(chan []byte, 1), closed: make(chan struct{})}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- g.Serve(ctx, st, ServeOptions{}) }()
	st.msgs <- &jsonrpc.Message{ID: jsonrpc.IntID(7), Method: methodPing}
	select {
	case answer := <-st.written:
		if m, err := jsonrpc.Decode(answer); err != nil || m.ID != jsonrpc.IntID(7) || m.Error != nil {
			t.Errorf("answer to ping: %s", answer)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("no answer to ping")
	}
	close(st.closed)
	cancel()
	<-served
	if n := st.reads.Load(); n > 0 {
		t.Errorf("the session called Read %d times: it had the decoded message encoded again", n)
	}
}
