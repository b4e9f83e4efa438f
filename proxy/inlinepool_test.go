package proxy_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// An inline call's state is reused once its call is answered (see
// inlinepool.go). Calls in flight from several sessions at once, some
// cancelled by their client and some past their deadline (a 1 ms timeout,
// which the answers race), each get their own answer and nothing else;
// under -race, a state reused while anything still held it shows as a
// race here.
func TestInlineCallReuse(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a server")
	}
	g := startGreeter(t, "1ms")

	const sessions, callers, calls = 3, 6, 300
	var wg sync.WaitGroup
	var results atomic.Int64 // answered with the result: a run that got none exercised no reuse
	errs := make(chan error, sessions*callers)
	for s := range sessions {
		client := greeterClient(t, g, "reuse")
		ctx := context.Background()
		// The first call may wait for the tool list; from then on calls
		// go inline.
		if _, err := client.Call(ctx, "tools/list", nil); err != nil {
			t.Fatal(err)
		}
		for c := range callers {
			wg.Go(func() {
				for i := range calls {
					text := fmt.Sprintf("s%d-c%d-%d", s, c, i)
					call, err := client.Go(ctx, "tools/call", json.RawMessage(`{"name":"greeter__hello","arguments":{"echo":"`+text+`"}}`))
					if err != nil {
						errs <- err
						return
					}
					if i%4 == 0 {
						// Cancelled: no answer is owed; it may come all the same.
						client.Notify(ctx, "notifications/cancelled", json.RawMessage(`{"requestId":`+call.ID().String()+`}`))
						call.Abandon(errors.New("cancelled by the test"))
						continue
					}
					res, err := call.Wait(ctx)
					if err != nil {
						continue // past its deadline: an error is the answer
					}
					if !strings.Contains(string(res), `"`+text+`"`) {
						errs <- fmt.Errorf("call %s was answered %s", text, res)
						return
					}
					results.Add(1)
				}
			})
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if results.Load() == 0 {
		t.Error("no call was answered with its result: nothing was served inline, and no state reused")
	}
}
