package proxy

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate/config"
	"github.com/mcpgate/mcpgate/jsonrpc"
)

// startSubscribeGateway runs a gateway in front of subscribeServer
// (subscribeserver_test.go), whose events are files in the returned dir.
func startSubscribeGateway(t *testing.T) (*Gateway, string) {
	t.Helper()
	return startSubscribeGatewayWith(t, "")
}

// startSubscribeGatewayWith is startSubscribeGateway with more top-level
// config members (each followed by a comma).
func startSubscribeGatewayWith(t *testing.T, members string) (*Gateway, string) {
	t.Helper()
	dir := t.TempDir()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cfgJSON := fmt.Sprintf(`{%s"mcpServers": {"docs": {"command": %q, "env": {"MCPGATE_SUBSCRIBE_SERVER": %q}}}}`, members, self, dir)
	cfg, err := config.Load([]byte(cfgJSON), "mcpgate.json", os.LookupEnv)
	if err != nil {
		t.Fatal(err)
	}
	g, err := New(cfg, Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	g.Start()
	t.Cleanup(func() { g.Close() })
	return g, dir
}

// openSubscribeSession opens one client session on g.
func openSubscribeSession(t *testing.T, g *Gateway) *jsonrpc.Conn {
	t.Helper()
	toGateway, fromClient := io.Pipe()
	toClient, fromGateway := io.Pipe()
	served := make(chan struct{})
	go func() {
		defer close(served)
		g.Serve(context.Background(), jsonrpc.NewLineStream(toGateway, fromGateway, fromGateway, 0), ServeOptions{})
	}()
	client := jsonrpc.NewConn(jsonrpc.NewLineStream(toClient, fromClient, fromClient, 0), jsonrpc.Options{}).Start()
	t.Cleanup(func() {
		client.Close()
		fromClient.Close()
		fromGateway.Close()
		<-served
	})
	ctx := context.Background()
	if _, err := client.Call(ctx, "initialize", json.RawMessage(`{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}`)); err != nil {
		t.Fatal(err)
	}
	client.Notify(ctx, "notifications/initialized", nil)
	return client
}

// waitUntil waits (up to a generous limit) for cond, polled: an event
// inside the gateway that nothing else announces.
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	limit := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(limit) {
			t.Fatalf("gave up waiting until %s", what)
		}
		time.Sleep(5 * time.Millisecond) // polling for an event, not a sleep for timing
	}
}

func waitForFile(t *testing.T, name string) {
	t.Helper()
	waitUntil(t, filepath.Base(name)+" exists", func() bool {
		_, err := os.Stat(name)
		return err == nil
	})
}

// subscribersOf counts the subscribers of the server's URI uri.
func subscribersOf(g *Gateway, uri string) int {
	g.mu.Lock()
	defer g.mu.Unlock()
	n := 0
	for key, subs := range g.subs {
		if key.uri == uri {
			n += len(subs)
		}
	}
	return n
}

const subscribeX = `{"uri":"docs__file:///x"}`

// A client that subscribes to a URI while another client's subscribe to it
// is still on its way to the server gets the server's answer too: it used
// to be told at once that it was subscribed, and when the server refused,
// it stayed counted, and never got an update.
func TestSubscribeJoinerGetsTheServersAnswer(t *testing.T) {
	g, dir := startSubscribeGateway(t)
	a, b := openSubscribeSession(t, g), openSubscribeSession(t, g)
	ctx := context.Background()

	aDone := goCall(ctx, a, methodSubscribe, subscribeX)
	waitForFile(t, filepath.Join(dir, "subscribe.1"))
	bDone := goCall(ctx, b, methodSubscribe, subscribeX)
	waitUntil(t, "both clients are counted", func() bool { return subscribersOf(g, "file:///x") == 2 })

	touch(t, filepath.Join(dir, "fail"))
	touch(t, filepath.Join(dir, "release"))
	for name, done := range map[string]<-chan error{"first": aDone, "second": bDone} {
		select {
		case err := <-done:
			if err == nil || !strings.Contains(err.Error(), "watch refused") {
				t.Errorf("the %s subscriber got %v, want the server's refusal", name, err)
			}
		case <-time.After(20 * time.Second):
			t.Fatalf("the %s subscriber got no answer", name)
		}
	}
	if n := subscribersOf(g, "file:///x"); n != 0 {
		t.Errorf("%d subscribers are counted for a URI the server refused", n)
	}
	g.mu.Lock()
	checkSubscriptionIndex(t, g, "after the refusal")
	g.mu.Unlock()
	if _, err := os.Stat(filepath.Join(dir, "subscribe.2")); err == nil {
		t.Error("the second subscriber's subscribe went to the server too")
	}
}

// A subscribe cancelled (its client gone) while the server has it still
// subscribes the server: once its answer comes, and nobody watches the
// URI, mcpgate unsubscribes. It used to forget it, the server subscribed
// for good with nobody watching. Until the answer, the cancelled
// subscriber stays counted (TestSubscribeCancelledInFlightStaysCounted).
func TestSubscribeCancelledInFlightIsUnsubscribed(t *testing.T) {
	g, dir := startSubscribeGateway(t)
	a := openSubscribeSession(t, g)

	callCtx, cancel := context.WithCancel(context.Background())
	aDone := goCall(callCtx, a, methodSubscribe, subscribeX)
	waitForFile(t, filepath.Join(dir, "subscribe.1"))
	// initialize was request 1, the subscribe is 2.
	a.Notify(context.Background(), notifyCancelled, json.RawMessage(`{"requestId":2,"reason":"gone"}`))
	cancel()
	<-aDone
	waitUntil(t, "the cancelled subscriber is recorded as gone", func() bool {
		g.mu.Lock()
		defer g.mu.Unlock()
		for _, p := range g.subscribing {
			return len(p.gone) == 1
		}
		return false
	})
	if n := subscribersOf(g, "file:///x"); n != 1 {
		t.Errorf("%d subscribers are counted while the cancelled one's subscribe is in flight, want 1", n)
	}

	touch(t, filepath.Join(dir, "release")) // the server subscribes
	waitForFile(t, filepath.Join(dir, "unsubscribed"))
	waitUntil(t, "the cancelled subscriber is no longer counted", func() bool { return subscribersOf(g, "file:///x") == 0 })
}

func touch(t *testing.T, name string) {
	t.Helper()
	if err := os.WriteFile(name, nil, 0o644); err != nil {
		t.Fatal(err)
	}
}

// A client that subscribes while another's subscribe is on its way is
// answered once the server accepted it, and no second subscribe is sent.
func TestSubscribeJoinerWaitsForTheServer(t *testing.T) {
	g, dir := startSubscribeGateway(t)
	a, b := openSubscribeSession(t, g), openSubscribeSession(t, g)
	ctx := context.Background()

	aDone, bDone := make(chan error, 1), make(chan error, 1)
	go func() {
		_, err := a.Call(ctx, methodSubscribe, json.RawMessage(subscribeX))
		aDone <- err
	}()
	waitForFile(t, filepath.Join(dir, "subscribe.1"))
	go func() {
		_, err := b.Call(ctx, methodSubscribe, json.RawMessage(subscribeX))
		bDone <- err
	}()
	waitUntil(t, "both clients are counted", func() bool { return subscribersOf(g, "file:///x") == 2 })
	select {
	case err := <-bDone:
		t.Fatalf("the second subscriber was answered (%v) before the server answered", err)
	default:
	}

	touch(t, filepath.Join(dir, "release"))
	for name, done := range map[string]<-chan error{"first": aDone, "second": bDone} {
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("the %s subscriber got %v", name, err)
			}
		case <-time.After(20 * time.Second):
			t.Fatalf("the %s subscriber got no answer", name)
		}
	}
	if n := subscribersOf(g, "file:///x"); n != 2 {
		t.Errorf("%d subscribers are counted, want 2", n)
	}
	if _, err := os.Stat(filepath.Join(dir, "subscribe.2")); err == nil {
		t.Error("the second subscriber's subscribe went to the server too")
	}
}

// A client that subscribes to a URI while the last subscriber's
// unsubscribe is on its way to the server waits for it, and its subscribe
// goes after it: sent at once, it raced the unsubscribe, and a server that
// answered the unsubscribe last was left unsubscribed with a client
// counted as subscribed, never to get an update.
func TestSubscribeDuringTheLastUnsubscribeSubscribesAfterIt(t *testing.T) {
	g, dir := startSubscribeGateway(t)
	touch(t, filepath.Join(dir, "release"))
	touch(t, filepath.Join(dir, "hold-unsubscribe"))
	a, b := openSubscribeSession(t, g), openSubscribeSession(t, g)
	ctx := context.Background()

	// # a subscribes, then unsubscribes; the server holds the unsubscribe
	if _, err := a.Call(ctx, methodSubscribe, json.RawMessage(subscribeX)); err != nil {
		t.Fatal(err)
	}
	aDone := goCall(ctx, a, methodUnsubscribe, subscribeX)
	waitForFile(t, filepath.Join(dir, "unsubscribe.1"))

	// # b subscribes meanwhile
	bDone := goCall(ctx, b, methodSubscribe, subscribeX)
	waitUntil(t, "the second client is counted", func() bool { return subscribersOf(g, "file:///x") == 1 })

	// # the server answers the unsubscribe
	touch(t, filepath.Join(dir, "release-unsubscribe"))
	for name, done := range map[string]<-chan error{"unsubscribe": aDone, "subscribe": bDone} {
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("the %s got %v", name, err)
			}
		case <-time.After(20 * time.Second):
			t.Fatalf("the %s got no answer", name)
		}
	}
	if n := subscribersOf(g, "file:///x"); n != 1 {
		t.Errorf("%d subscribers are counted, want 1", n)
	}
	if _, err := os.Stat(filepath.Join(dir, "subscribed")); err != nil {
		t.Error("the server is not subscribed, yet a client is counted as subscribed")
	}
}

// A subscribe in flight when a reload replaces its server ends as the old
// server stops, but its subscriber is moved to the successor, which
// subscribes again: it is told it is subscribed. It used to get the old
// server's end as an error while counted (and updated) as subscribed.
func TestSubscribeInFlightMovedByAReloadIsSubscribed(t *testing.T) {
	g, dir := startSubscribeGateway(t)
	a := openSubscribeSession(t, g)
	ctx := context.Background()

	aDone := goCall(ctx, a, methodSubscribe, subscribeX)
	waitForFile(t, filepath.Join(dir, "subscribe.1"))

	// # the server is replaced; its successor answers subscribes at once
	dir2 := t.TempDir()
	touch(t, filepath.Join(dir2, "release"))
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load([]byte(fmt.Sprintf(`{"shutdown_grace": "100ms", "mcpServers": {"docs": {"command": %q, "env": {"MCPGATE_SUBSCRIBE_SERVER": %q}}}}`, self, dir2)), "mcpgate.json", os.LookupEnv)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := g.Reload(cfg); err != nil {
		t.Fatal(err)
	}
	waitForFile(t, filepath.Join(dir2, "subscribed"))

	select {
	case err := <-aDone:
		n := subscribersOf(g, "file:///x")
		if err != nil && n != 0 {
			t.Errorf("the subscriber got %v, yet is counted as subscribed (%d)", err, n)
		}
		if err == nil && n != 1 {
			t.Errorf("the subscriber was told it is subscribed, yet %d are counted", n)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the subscriber got no answer")
	}
}

// goCall makes a call on its own goroutine: its error comes on the channel
// returned, so that a test can act while the call waits for the server.
func goCall(ctx context.Context, c *jsonrpc.Conn, method, params string) <-chan error {
	done := make(chan error, 1)
	go func() {
		_, err := c.Call(ctx, method, json.RawMessage(params))
		done <- err
	}()
	return done
}
