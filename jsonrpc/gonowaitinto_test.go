package jsonrpc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
)

// A Call reused through GoNoWaitInto (as a pooled inline call reuses
// its own) gets each use's answer and nothing of an earlier one: its hook
// is told once a use, with that use's result, whether Then comes before or
// after the answer, and whether an Abandon racing the answer wins (the
// call's id is then remembered, so its memory is not reused, as the
// proxy's pool does not reuse it). Under -race, a field written by an
// earlier use's completion after the next use began shows as a race.
func TestGoNoWaitIntoReusedCallGetsEachUsesAnswerOnce(t *testing.T) {
	client, _, _ := inlinePair(t, func(_ context.Context, msg *Message, r *Reply) bool {
		r.Answer(msg.Params, nil, nil) // on the server's reader: answers race Then
		return true
	})
	ctx := watchdog(t)
	const workers, rounds = 4, 1000
	var (
		wg         sync.WaitGroup
		registered atomic.Int64 // hooks Then took
		told       atomic.Int64 // hooks told
	)
	for w := range workers {
		wg.Go(func() {
			call := new(Call)
			for i := range rounds {
				want := fmt.Sprintf(`["w%d-%d"]`, w, i)
				if err := client.GoNoWaitInto(ctx, call, nil, "echo", json.RawMessage(want)); err != nil {
					t.Error(err)
					return
				}
				abandoned := make(chan bool, 1)
				if i%7 == 3 {
					go func() { abandoned <- call.Abandon(errors.New("given up")) }()
				} else {
					abandoned <- false
				}
				outcome := make(chan error, 2)
				finish := func() {
					res, err := call.Wait(ctx) // over: at once
					switch {
					case err != nil:
						outcome <- err
					case string(res) != want:
						outcome <- fmt.Errorf("use %s of a reused call was answered %s", want, res)
					default:
						outcome <- nil
					}
				}
				if call.Then(completionFunc(func(*Cork) { told.Add(1); finish() })) {
					registered.Add(1)
				} else {
					finish()
				}
				err := <-outcome
				gaveUp := <-abandoned
				switch {
				case gaveUp != (err != nil):
					t.Errorf("use %s: abandoned %v, yet its outcome is %v", want, gaveUp, err)
					return
				case err != nil && !gaveUp:
					t.Error(err)
					return
				case gaveUp:
					call = new(Call) // its id is remembered as abandoned
				}
			}
		})
	}
	wg.Wait()
	if r, n := registered.Load(), told.Load(); r != n {
		t.Fatalf("Then took %d hooks, told %d times, want once each", r, n)
	}
}
