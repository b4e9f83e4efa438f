package proxy

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A subscriber cancelled while its subscribe is on its way to the server
// stays counted until the server answered: the subscribe runs on, so
// "subscribe to a new URI, then cancel", over and over, grew the
// subscribes in flight (and the server's pending requests) without bound,
// the per-session limit never seeing them. Once the answers came, nobody
// is counted and the server is unsubscribed.
func TestSubscribeCancelledInFlightStaysCounted(t *testing.T) {
	audit := filepath.Join(t.TempDir(), "audit.jsonl")
	g, dir := startSubscribeGatewayWith(t, fmt.Sprintf(`"audit": {"path": %q, "sync": "always"},`, audit))
	a := openSubscribeSession(t, g)
	ctx := context.Background()

	// # the session subscribes to maxSubscriptions URIs, cancelling each
	// while the server holds it (in batches: a session's requests in
	// flight are bounded too)
	const batch = 256
	id := 1 // initialize's
	for sent := 0; sent < maxSubscriptions; sent += batch {
		first := id + 1
		for i := range batch {
			id++
			if _, err := a.Go(ctx, methodSubscribe, json.RawMessage(fmt.Sprintf(`{"uri":"docs__file:///n/%d"}`, sent+i))); err != nil {
				t.Fatal(err)
			}
		}
		waitForFile(t, filepath.Join(dir, fmt.Sprintf("subscribe.%d", sent+batch)))
		for req := first; req <= id; req++ {
			a.Notify(ctx, notifyCancelled, json.RawMessage(fmt.Sprintf(`{"requestId":%d,"reason":"gone"}`, req)))
		}
		waitUntil(t, "the cancelled subscribes are audited", func() bool {
			b, _ := os.ReadFile(audit)
			return bytes.Count(b, []byte(`"resources/subscribe"`)) >= sent+batch
		})
	}

	// # one more is past the limit
	callCtx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	_, err := a.Call(callCtx, methodSubscribe, json.RawMessage(`{"uri":"docs__file:///n/over"}`))
	if err == nil || !strings.Contains(err.Error(), "resource subscriptions") {
		t.Fatalf("a subscribe past %d cancelled ones in flight got %v, want the limit's refusal", maxSubscriptions, err)
	}

	// # the server answers: nobody is counted, and it is unsubscribed
	touch(t, filepath.Join(dir, "release"))
	waitUntil(t, "nothing is in flight or counted", func() bool {
		g.mu.Lock()
		defer g.mu.Unlock()
		return len(g.subscribing) == 0 && len(g.subs) == 0 && len(g.subsOf) == 0 && len(g.subsByUp) == 0
	})
	waitForFile(t, filepath.Join(dir, fmt.Sprintf("unsubscribe.%d", maxSubscriptions)))
}
