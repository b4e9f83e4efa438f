package jsonrpc

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"
)

// partsStream is a memStream that takes messages in parts too.
type partsStream struct {
	*memStream
	mu    sync.Mutex
	parts [][][]byte
}

func (s *partsStream) WriteParts(ctx context.Context, parts [][]byte, related ID, final bool) error {
	s.mu.Lock()
	s.parts = append(s.parts, parts)
	s.mu.Unlock()
	return s.memStream.Write(ctx, bytes.Join(parts, nil))
}

// A big result goes out as the envelope's head, the very bytes the handler
// returned, and the closing brace: it is not copied into an encoded
// message (a 50 MiB result was copied twice on its way out).
func TestBigResultWrittenWithoutCopy(t *testing.T) {
	result := json.RawMessage(`{"text":"` + strings.Repeat("x", 1<<20) + `"}`)
	s := &partsStream{memStream: newMemStream()}
	c := NewConn(s, Options{Handler: HandlerFunc(func(ctx context.Context, m *Message) (json.RawMessage, error) {
		return result, nil
	})}).Start()
	defer c.Close()
	s.in <- []byte(`{"jsonrpc":"2.0","id":"big-1","method":"m"}`)
	select {
	case <-s.wrote:
	case <-time.After(10 * time.Second):
		t.Fatal("no answer")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.parts) != 1 || len(s.parts[0]) != 3 || &s.parts[0][1][0] != &result[0] {
		t.Fatalf("the answer was not written as head, result, tail with the result's own bytes (%d messages in parts)", len(s.parts))
	}
	whole := string(bytes.Join(s.parts[0], nil))
	if want := `{"jsonrpc":"2.0","id":"big-1","result":` + string(result) + `}`; whole != want {
		t.Errorf("answer = %.80q…, want %.80q…", whole, want)
	}
	if m, err := Decode([]byte(whole)); err != nil || m.ID.String() != `"big-1"` {
		t.Errorf("the answer does not decode: %v", err)
	}
}
