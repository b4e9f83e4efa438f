package proxy

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mcpgate/mcpgate/jsonrpc"
)

// budgetAnswer is the answer to request id: about 330 bytes.
func budgetAnswer(id int) []byte {
	return (&jsonrpc.Message{ID: jsonrpc.IntID(int64(id)), Result: []byte(`"` + strings.Repeat("x", 300) + `"`)}).Encode()
}

// writeAnswers writes the answers to requests from..to, each from a
// goroutine of its own as callers do, one after the other: each has found
// its place (written, queued or waiting for room) before the next comes.
func writeAnswers(q *outbox, wg *sync.WaitGroup, errs []error, from, to int) {
	for i := from; i <= to; i++ {
		wg.Go(func() {
			errs[i] = q.WriteRelated(context.Background(), budgetAnswer(i), jsonrpc.IntID(int64(i)), true)
		})
		synctest.Wait()
	}
}

// writtenAnswers sorts what was written into the ids of results and of
// the errors that replaced answers.
func writtenAnswers(t *testing.T, written [][]byte) (results, dropped []string) {
	t.Helper()
	for _, b := range written {
		var m struct {
			ID     json.RawMessage
			Result json.RawMessage
			Error  *jsonrpc.Error
		}
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatalf("written %q: %v", b, err)
		}
		switch {
		case m.Result != nil:
			results = append(results, string(m.ID))
		case m.Error != nil && strings.Contains(m.Error.Message, "was dropped"):
			dropped = append(dropped, string(m.ID))
		}
	}
	slices.Sort(results)
	slices.Sort(dropped)
	return results, dropped
}

// A client past its answer budget that reads nothing for clientStuckAfter:
// the answer past the budget is released and replaced by a small error for
// the same request, reported once; those past it that come next are
// released at once; a request to the client fails at once; and once the
// client reads, every request has its answer.
func TestOutboxAnswersPastTheBudgetAreReplaced(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		bs := &blockedStream{release: make(chan struct{})}
		q := newOutbox(bs, 100, true, 2*time.Second, nil)
		size := len(budgetAnswer(1))
		var reports []string
		q.budget.limit = 3*size + 10
		q.budget.onStuck = func(id jsonrpc.ID, _, _ int) { reports = append(reports, id.String()) }

		var wg sync.WaitGroup
		errs := make([]error, 7)
		// 1 is being written (the client does not read), 2 queued, 3 waits
		// within the budget, 4 past it.
		writeAnswers(q, &wg, errs, 1, 4)
		q.mu.Lock()
		if q.budget.released != 0 || q.budget.waiting != 2*size {
			t.Fatalf("released %d, %d bytes waiting; want none released yet, 2 answers waiting", q.budget.released, q.budget.waiting)
		}
		q.mu.Unlock()
		time.Sleep(clientStuckAfter)
		synctest.Wait()
		writeAnswers(q, &wg, errs, 5, 6) // released at once
		q.mu.Lock()
		if q.budget.released != 3 || !slices.Equal(reports, []string{"4"}) {
			t.Fatalf("released %d, reported %v; want 3 released, request 4 reported", q.budget.released, reports)
		}
		q.mu.Unlock()
		if err := q.Write(context.Background(), []byte(`{"jsonrpc":"2.0","id":"s1","method":"sampling/createMessage"}`)); !errors.Is(err, errClientStuck) {
			t.Fatalf("a request to a stuck client: err = %v, want errClientStuck", err)
		}

		close(bs.release)
		wg.Wait()
		for i, err := range errs[1:] {
			if err != nil {
				t.Fatalf("answer %d: %v", i+1, err)
			}
		}
		q.Close()
		bs.mu.Lock()
		defer bs.mu.Unlock()
		results, dropped := writtenAnswers(t, bs.written)
		if !slices.Equal(results, []string{"1", "2", "3"}) || !slices.Equal(dropped, []string{"4", "5", "6"}) {
			t.Fatalf("results for %v, errors for %v; want results for 1-3 (within the budget), errors for 4-6", results, dropped)
		}
	})
}

// steppedStream is a client that reads one message at a time, when told.
type steppedStream struct {
	step    chan struct{}
	mu      sync.Mutex
	written [][]byte
}

func (s *steppedStream) Read() ([]byte, error) { select {} }
func (s *steppedStream) Write(ctx context.Context, m []byte) error {
	<-s.step
	s.mu.Lock()
	s.written = append(s.written, m)
	s.mu.Unlock()
	return nil
}
func (s *steppedStream) Close() error { return nil }

// A client that reads, however slowly, is never treated as stuck: answers
// past the budget wait as long as a write to it completes within
// clientStuckAfter of the one before, and every request gets its answer.
func TestOutboxAnswersPastTheBudgetWaitWhileTheClientReads(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ss := &steppedStream{step: make(chan struct{})}
		q := newOutbox(ss, 100, true, 2*time.Second, nil)
		size := len(budgetAnswer(1))
		q.budget.limit = 3*size + 10
		q.budget.onStuck = func(id jsonrpc.ID, _, _ int) { t.Errorf("request %s reported: the client reads", id) }

		const answers = 20
		var wg sync.WaitGroup
		errs := make([]error, answers+1)
		writeAnswers(q, &wg, errs, 1, 6) // 4-6 past the budget
		for i := 7; i <= answers; i++ {
			time.Sleep(clientStuckAfter * 3 / 4)
			ss.step <- struct{}{} // the client reads one, slowly
			writeAnswers(q, &wg, errs, i, i)
		}
		time.Sleep(clientStuckAfter * 3 / 4)
		close(ss.step)
		wg.Wait()
		for i, err := range errs[1:] {
			if err != nil {
				t.Fatalf("answer %d: %v", i+1, err)
			}
		}
		q.Close()
		ss.mu.Lock()
		defer ss.mu.Unlock()
		results, dropped := writtenAnswers(t, ss.written)
		if len(results) != answers || len(dropped) != 0 {
			t.Fatalf("%d results, errors for %v; want %d results, no error", len(results), dropped, answers)
		}
	})
}

// Whatever the client does, what waits for it never passes
// answerHardFactor times its budget: past that an answer is released at
// once, before the client could be found stuck.
func TestOutboxAnswersPastTheHardLimitAreReplacedAtOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		bs := &blockedStream{release: make(chan struct{})}
		q := newOutbox(bs, 100, true, 2*time.Second, nil)
		size := len(budgetAnswer(1))
		q.budget.limit = 3*size + 10
		var reports []string
		q.budget.onStuck = func(id jsonrpc.ID, _, _ int) { reports = append(reports, id.String()) }

		const answers = 16
		var wg sync.WaitGroup
		errs := make([]error, answers+1)
		writeAnswers(q, &wg, errs, 1, answers) // no time passes: nobody is found stuck
		q.mu.Lock()
		held := q.bytes + q.budget.waiting
		released := q.budget.released
		q.mu.Unlock()
		// The small errors in the answers' place wait too.
		errSize := len(stuckAnswer(jsonrpc.IntID(answers), size, held, answerHardFactor*q.budget.limit))
		if held > answerHardFactor*q.budget.limit+released*errSize || released == 0 || len(reports) != 1 {
			t.Fatalf("%d bytes held (hard limit %d), %d released, reported %v; want the hard limit kept, answers released and reported once", held, answerHardFactor*q.budget.limit, released, reports)
		}

		close(bs.release)
		wg.Wait()
		q.Close()
		bs.mu.Lock()
		defer bs.mu.Unlock()
		results, dropped := writtenAnswers(t, bs.written)
		if len(results)+len(dropped) != answers || len(dropped) != released {
			t.Fatalf("results for %v, errors for %v; want %d answers, %d of them errors", results, dropped, answers, released)
		}
	})
}
