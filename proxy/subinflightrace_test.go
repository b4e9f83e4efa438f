package proxy

import (
	"context"
	"encoding/json"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/mcpgate/mcpgate/jsonrpc"
)

// Clients subscribing and unsubscribing the same URI at once, in random
// order, leave the server subscribed exactly when mcpgate counts a
// subscriber, and nothing in flight: one request at a time goes upstream
// for a URI, so a server that answers in any order cannot end up undoing
// the last of them.
func TestSubscribeRacesLeaveTheServerAsCounted(t *testing.T) {
	g, dir := startSubscribeGateway(t)
	touch(t, filepath.Join(dir, "release"))
	var clients []*jsonrpc.Conn
	for range 3 {
		clients = append(clients, openSubscribeSession(t, g))
	}
	rng := rand.New(rand.NewPCG(1, 2))
	ctx := context.Background()
	for round := range 40 {
		var wg sync.WaitGroup
		for _, c := range clients {
			method := methodUnsubscribe
			if rng.IntN(2) == 0 {
				method = methodSubscribe
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				if _, err := c.Call(ctx, method, json.RawMessage(subscribeX)); err != nil {
					t.Errorf("round %d: %s: %v", round, method, err)
				}
			}()
		}
		wg.Wait()
		g.mu.Lock()
		inFlight := len(g.subscribing)
		checkSubscriptionIndex(t, g, "after a round")
		g.mu.Unlock()
		if inFlight != 0 {
			t.Fatalf("round %d: %d subscribes or unsubscribes are still in flight once every client was answered", round, inFlight)
		}
		_, err := os.Stat(filepath.Join(dir, "subscribed"))
		if subscribed, counted := err == nil, subscribersOf(g, "file:///x") > 0; subscribed != counted {
			t.Fatalf("round %d: the server is subscribed: %v; mcpgate counts a subscriber: %v", round, subscribed, counted)
		}
	}
}
