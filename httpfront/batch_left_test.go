package httpfront

import (
	"bytes"
	"context"
	"log/slog"
	"testing"
	"time"
)

// A batch's answer that comes once its POST has left (its client went
// away), while the POST is still the session's batch, is kept for the GET
// stream, as every response whose POST is gone is: not dropped.
func TestBatchAnswerAfterPOSTLeftIsKept(t *testing.T) {
	st := newHTTPStream("s", false, slog.New(slog.DiscardHandler), time.Minute)
	defer st.end()
	p := &postWaiter{st: st, ch: make(chan postMsg, 1), gone: make(chan struct{})}
	st.batch = p
	p.leave() // respond's way out, before serveBatch clears st.batch
	answer := []byte(`[{"jsonrpc":"2.0","id":1,"result":{}}]`)
	if err := st.Write(context.Background(), answer); err != nil {
		t.Fatal(err)
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	for _, kept := range st.backlog {
		if bytes.Equal(kept.msg, answer) {
			return
		}
	}
	t.Errorf("the batch's answer was dropped; backlog %d messages", len(st.backlog))
}
