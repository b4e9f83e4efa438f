package jsonrpc

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
)

// A handler's context ends when the peer cancels its request, and so do
// the contexts derived from it and the functions registered with
// context.AfterFunc; before that, it lasts.
func TestHandlerContextEndsOnCancel(t *testing.T) {
	started := make(chan struct{})
	ended := make(chan error, 3)
	client, server := pair(t, HandlerFunc(func(ctx context.Context, m *Message) (json.RawMessage, error) {
		derived, cancel := context.WithCancel(context.WithValue(ctx, struct{}{}, 1))
		defer cancel()
		context.AfterFunc(ctx, func() { ended <- errors.New("after") })
		stopped := context.AfterFunc(ctx, func() { t.Error("a stopped AfterFunc ran") })
		if !stopped() {
			t.Error("stopping an AfterFunc before the end did not stop it")
		}
		if ctx.Err() != nil || context.Cause(ctx) != nil {
			t.Errorf("before the cancellation: Err %v, Cause %v", ctx.Err(), context.Cause(ctx))
		}
		close(started)
		<-derived.Done()
		<-ctx.Done()
		ended <- ctx.Err()
		ended <- context.Cause(derived)
		return nil, ctx.Err()
	}))
	if _, err := client.Go(watchdog(t), "wait", nil); err != nil {
		t.Fatal(err)
	}
	<-started
	var id ID
	server.mu.Lock()
	for k := range server.incoming {
		id = k
	}
	server.mu.Unlock()
	if !server.CancelIncoming(id) {
		t.Fatal("the request was not in flight")
	}
	for range 3 {
		if err := <-ended; err.Error() != "after" && !errors.Is(err, context.Canceled) {
			t.Fatalf("ended with %v, want context.Canceled", err)
		}
	}
}

// Handlers' contexts end when the Conn cancels its handlers, a request
// that arrives afterwards included.
func TestHandlerContextEndsOnCancelHandlers(t *testing.T) {
	started := make(chan struct{}, 2)
	client, server := pair(t, HandlerFunc(func(ctx context.Context, m *Message) (json.RawMessage, error) {
		started <- struct{}{}
		<-ctx.Done()
		return nil, ctx.Err()
	}))
	ctx := watchdog(t)
	first, err := client.Go(ctx, "wait", nil)
	if err != nil {
		t.Fatal(err)
	}
	<-started
	server.CancelHandlers()
	if _, err := first.Wait(ctx); err == nil {
		t.Fatal("the handler's context did not end")
	}
	if _, err := client.Call(ctx, "wait", nil); err == nil {
		t.Fatal("a request after CancelHandlers was handled under a live context")
	}
}
