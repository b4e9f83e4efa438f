//go:build linux || darwin

package jsonrpc

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"
)

// On a pipe nobody reads, TryWrite writes while there is room and never
// waits; a message it could only begin is finished by WriteRest, and the
// reader then gets every message whole, in order.
func TestTryWriteNeverWaitsNorCuts(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	s := NewLineStream(strings.NewReader(""), w, w, 0).(*lineStream)
	if s.raw == nil {
		t.Skip("this pipe is not in non-blocking mode")
	}
	var sent []string
	var rest []byte
	for i := 0; rest == nil; i++ {
		msg := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"m","params":{"pad":%q}}`, i, strings.Repeat("x", 10000)) // over PIPE_BUF: a write of it may be partial
		written, r, err := s.TryWrite([]byte(msg))
		if err != nil {
			t.Fatal(err)
		}
		if !written {
			break // full at a message boundary
		}
		sent, rest = append(sent, msg), r
		if i > 1<<20 {
			t.Fatal("TryWrite never found the pipe full")
		}
	}
	t.Logf("%d messages written, the last only begun: %v", len(sent), rest != nil)
	done := make(chan error, 1)
	go func() {
		if rest != nil {
			done <- s.WriteRest(context.Background(), rest)
			return
		}
		done <- nil
	}()
	br := bufio.NewReader(r)
	for i, want := range sent {
		line, err := br.ReadString('\n')
		if err != nil && err != io.EOF {
			t.Fatal(err)
		}
		if line != want+"\n" {
			t.Fatalf("message %d = %.60q…, want %.60q…", i, line, want)
		}
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}
