package proxy

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate/config"
	"github.com/mcpgate/mcpgate/jsonrpc"
)

// TestDeleteKeepsADenialADenial: a call in flight when its client ends the
// session (DELETE) gets the DELETE error, but one whose result a policy
// blocked is recorded as denied all the same, in the audit trail and the
// metrics: nobody reads the answer, and the policy's verdict is what the
// trail is for.
func TestDeleteKeepsADenialADenial(t *testing.T) {
	self, _ := os.Executable()
	auditPath := filepath.Join(t.TempDir(), "audit.jsonl")
	cfg, err := config.Load(fmt.Appendf(nil, `{"mcpServers": {"greeter": {"command": %q, "env": {"MCPGATE_EXAMPLE_SERVER": "1"}}},
		"policies": [{"policy": "injection", "action": "block"}], "audit": {"path": %q}}`, self, auditPath), "mcpgate.json", os.LookupEnv)
	if err != nil {
		t.Fatal(err)
	}
	g, err := New(cfg, Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	g.Start()
	closed := false
	defer func() {
		if !closed {
			g.Close()
		}
	}()

	answered := make(chan struct{})
	testHookClientLeft = func() {
		select {
		case <-answered:
		case <-time.After(20 * time.Second): // generous: the answer is only the server's round trip away
		}
	}
	defer func() { testHookClientLeft = nil }()

	toGateway, fromClient := io.Pipe()
	toClient, fromGateway := io.Pipe()
	var deleted atomic.Bool
	served := make(chan error, 1)
	go func() {
		served <- g.Serve(context.Background(), jsonrpc.NewLineStream(toGateway, fromGateway, fromGateway, 0), ServeOptions{Ended: deleted.Load})
	}()
	asked := make(chan struct{}, 1)
	client := jsonrpc.NewConn(jsonrpc.NewLineStream(toClient, fromClient, fromClient, 0), jsonrpc.Options{
		Handler: jsonrpc.HandlerFunc(func(ctx context.Context, msg *jsonrpc.Message) (json.RawMessage, error) {
			if msg.Method == "sampling/createMessage" {
				asked <- struct{}{}
				<-ctx.Done() // the client leaves before it answers
			}
			return nil, ctx.Err()
		}),
	}).Start()
	defer client.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if _, err := client.Call(ctx, "initialize", json.RawMessage(`{"protocolVersion":"2025-11-25","capabilities":{"sampling":{}},"clientInfo":{"name":"deleter","version":"1"}}`)); err != nil {
		t.Fatal(err)
	}
	client.Notify(ctx, "notifications/initialized", nil)
	call, err := client.Go(ctx, "tools/call", json.RawMessage(`{"name":"greeter__hello","arguments":{"ask":true,"inject":true}}`))
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-asked:
	case <-ctx.Done():
		t.Fatal("the server's sampling request never reached the client")
	}
	deleted.Store(true)
	fromClient.Close()
	call.Wait(ctx)
	close(answered)
	if err := <-served; err != nil {
		t.Errorf("Serve: %v", err)
	}
	g.Close() // the audit trail written out
	closed = true
	trail, err := os.ReadFile(auditPath)
	if err != nil {
		t.Fatal(err)
	}
	for line := range bytes.Lines(trail) {
		var rec struct{ Method, Outcome string }
		if json.Unmarshal(line, &rec) == nil && rec.Method == methodToolsCall {
			if rec.Outcome != "denied" {
				t.Errorf("the blocked call's audit line after DELETE: %s; want outcome denied", bytes.TrimSpace(line))
			}
			return
		}
	}
	t.Fatalf("no tools/call line in the audit trail:\n%s", trail)
}
