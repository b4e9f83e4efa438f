package proxy_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"
	"time"

	"github.com/mcpgate/mcpgate/jsonrpc"
)

// subscribeServer is an MCP server over stdio whose resources/subscribe
// answers are held until the test lets them go, so that a race with the
// subscribe in flight can be set up (subinflight_test.go). Its events are
// files in dir: subscribe.N as the Nth subscribe arrives; it answers once
// "release" exists, with an error if "fail" does; "unsubscribed" once an
// unsubscribe arrived. Its state is "subscribed", there from a subscribe's
// answer to an unsubscribe's; unsubscribe.N marks the Nth unsubscribe's
// arrival, answered at once unless "hold-unsubscribe" exists, then once
// "release-unsubscribe" does.
func subscribeServer(dir string) {
	var subscribes, unsubscribes atomic.Int64
	// One poller for "release", not one per held subscribe: a test holds
	// a thousand of them.
	released := make(chan struct{})
	go func() {
		for !exists(filepath.Join(dir, "release")) {
			time.Sleep(5 * time.Millisecond) // polling a file for an event
		}
		close(released)
	}()
	conn := jsonrpc.NewConn(jsonrpc.NewLineStream(os.Stdin, os.Stdout, nil, 0), jsonrpc.Options{
		Handler: jsonrpc.HandlerFunc(func(ctx context.Context, msg *jsonrpc.Message) (json.RawMessage, error) {
			switch msg.Method {
			case "initialize":
				return json.RawMessage(`{"protocolVersion":"2025-11-25","capabilities":{"resources":{"subscribe":true}},"serverInfo":{"name":"docs","version":"1"}}`), nil
			case "resources/list":
				return json.RawMessage(`{"resources":[{"uri":"file:///x","name":"x"}]}`), nil
			case "resources/subscribe":
				touch(filepath.Join(dir, fmt.Sprintf("subscribe.%d", subscribes.Add(1))))
				// Held whatever the gateway says meanwhile (a cancel
				// included): the server subscribes when it gets to it.
				<-released
				if exists(filepath.Join(dir, "fail")) {
					return nil, &jsonrpc.Error{Code: -32603, Message: "watch refused"}
				}
				touch(filepath.Join(dir, "subscribed"))
				return json.RawMessage(`{}`), nil
			case "resources/unsubscribe":
				touch(filepath.Join(dir, fmt.Sprintf("unsubscribe.%d", unsubscribes.Add(1))))
				// Held, so that what the gateway sends meanwhile is seen:
				// a server may answer its requests in any order.
				for exists(filepath.Join(dir, "hold-unsubscribe")) && !exists(filepath.Join(dir, "release-unsubscribe")) {
					time.Sleep(5 * time.Millisecond) // polling a file for an event
				}
				os.Remove(filepath.Join(dir, "subscribed"))
				touch(filepath.Join(dir, "unsubscribed"))
				return json.RawMessage(`{}`), nil
			}
			return nil, nil
		}),
	}).Start()
	<-conn.Done()
}

func touch(name string) { os.WriteFile(name, nil, 0o644) }

func exists(name string) bool {
	_, err := os.Stat(name)
	return err == nil
}
