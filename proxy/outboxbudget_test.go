package proxy

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate/jsonrpc"
)

// A client past its answer budget: answers that would wait for room are
// released and replaced by a small error for the same request, reported
// once; a request to the client fails at once; and once the client reads,
// every request has its answer.
func TestOutboxAnswersPastTheBudgetAreReplaced(t *testing.T) {
	bs := &blockedStream{release: make(chan struct{})}
	q := newOutbox(bs, 100, true, 2*time.Second, nil)
	answer := func(id int) []byte {
		return (&jsonrpc.Message{ID: jsonrpc.IntID(int64(id)), Result: []byte(`"` + strings.Repeat("x", 300) + `"`)}).Encode()
	}
	size := len(answer(1))
	var reports []string
	q.budget.limit = 3*size + 10
	q.budget.onStuck = func(id jsonrpc.ID, _, _ int) { reports = append(reports, id.String()) }

	var wg sync.WaitGroup
	errs := make([]error, 7)
	write := func(i int, reached func() bool) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = q.WriteRelated(context.Background(), answer(i), jsonrpc.IntID(int64(i)), true)
		}()
		waitUntil(t, func() bool { q.mu.Lock(); defer q.mu.Unlock(); return reached() })
	}
	write(1, func() bool { return q.writing && q.bytes == size })                // being written: the client does not read
	write(2, func() bool { return len(q.msgs) == 1 })                            // queued
	write(3, func() bool { return q.budget.waiting == size })                    // waits for room, within the budget
	write(4, func() bool { return q.budget.released == 1 })                      // past it: replaced
	write(5, func() bool { return q.budget.released == 2 })                      // and again, reported once
	write(6, func() bool { return q.budget.released == 3 && len(reports) == 1 }) //
	if reports[0] != "4" {
		t.Fatalf("reported request %s, want 4", reports[0])
	}
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
	var results, dropped []string
	for _, b := range bs.written {
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
	if !slices.Equal(results, []string{"1", "2", "3"}) || !slices.Equal(dropped, []string{"4", "5", "6"}) {
		t.Fatalf("results for %v, errors for %v; want results for 1-3 (within the budget), errors for 4-6", results, dropped)
	}
}

// waitUntil polls cond, state other goroutines reach, with a generous limit.
func waitUntil(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition never met")
		}
		time.Sleep(time.Millisecond)
	}
}
