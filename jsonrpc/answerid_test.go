package jsonrpc

import (
	"context"
	"strings"
	"testing"
	"time"
)

// An answer whose id is the call's value spelt another way (1.0, 1e0 for
// 1, as a peer that parses ids as floats writes them) completes that call,
// as a request's id is matched by value (see ID.key); an answer whose id
// is another value ("1", 2) does not.
func TestAnswerMatchedByIDValue(t *testing.T) {
	for _, spelt := range []string{`1.0`, `1e0`, `10e-1`, `0.1E1`} {
		t.Run(spelt, func(t *testing.T) {
			s := newMemStream()
			bad := make(chan error, 4)
			c := NewConn(s, Options{OnBadInput: func(err error) { bad <- err }}).Start()
			defer c.Close()
			call, err := c.Go(context.Background(), "tools/call", nil)
			if err != nil {
				t.Fatal(err)
			}
			if call.ID().String() != "1" {
				t.Fatalf("first call's id is %s, want 1", call.ID())
			}
			s.in <- []byte(`{"jsonrpc":"2.0","id":"1","result":{"wrong":"a string id"}}`)
			s.in <- []byte(`{"jsonrpc":"2.0","id":2,"result":{"wrong":"another id"}}`)
			s.in <- []byte(`{"jsonrpc":"2.0","id":` + spelt + `,"result":{"right":true}}`)
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			res, err := call.Wait(ctx)
			if err != nil {
				t.Fatalf("call answered with id %s: %v", spelt, err)
			}
			if !strings.Contains(string(res), "right") {
				t.Fatalf("call completed with %s, an answer to another id", res)
			}
			for range 2 {
				select {
				case err := <-bad:
					if !strings.Contains(err.Error(), "unknown request id") {
						t.Fatalf("reported %v", err)
					}
				case <-ctx.Done():
					t.Fatal("an answer to an id not in flight was not reported")
				}
			}
		})
	}
}
