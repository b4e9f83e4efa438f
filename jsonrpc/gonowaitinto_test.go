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

// A connection that closes while reused calls are in flight, their answers
// racing the close: each use ends once, with its answer or ErrClosed, and
// its hook, if Then took it, is told once.
func TestGoNoWaitIntoReusedCallEndsOnceWhenTheConnectionCloses(t *testing.T) {
	for round := range 20 {
		client, server, _ := inlinePair(t, func(_ context.Context, msg *Message, r *Reply) bool {
			r.Answer(msg.Params, nil, nil)
			return true
		})
		ctx := watchdog(t)
		var (
			wg         sync.WaitGroup
			registered atomic.Int64
			told       atomic.Int64
			uses       atomic.Int64
			busy       = make(chan struct{}) // closed at the 50th use: the close races calls in flight
		)
		for w := range 3 {
			wg.Go(func() {
				call := new(Call)
				for i := 0; ; i++ {
					want := fmt.Sprintf(`["w%d-%d"]`, w, i)
					if err := client.GoNoWaitInto(ctx, call, nil, "echo", json.RawMessage(want)); err != nil {
						if !errors.Is(err, ErrClosed) {
							t.Errorf("round %d: %v, want ErrClosed", round, err)
						}
						return
					}
					if uses.Add(1) == 50 {
						close(busy)
					}
					outcome := make(chan error, 2)
					finish := func() {
						res, err := call.Wait(ctx)
						// A request read as the server closes goes to its
						// handler (see inlinePair), which answers "handler".
						if err == nil && string(res) != want && string(res) != `"handler"` {
							err = fmt.Errorf("use %s of a reused call was answered %s", want, res)
						}
						outcome <- err
					}
					if call.Then(completionFunc(func(*Cork) { told.Add(1); finish() })) {
						registered.Add(1)
					} else {
						finish()
					}
					if err := <-outcome; err != nil {
						if !errors.Is(err, ErrClosed) {
							t.Errorf("round %d: %v", round, err)
						}
						return
					}
				}
			})
		}
		select {
		case <-busy:
		case <-ctx.Done():
		}
		server.Close()
		wg.Wait()
		if r, n := registered.Load(), told.Load(); r != n {
			t.Fatalf("round %d: Then took %d hooks, told %d times, want once each", round, r, n)
		}
	}
}
