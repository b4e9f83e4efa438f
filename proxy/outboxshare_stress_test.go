package proxy

import (
	"bytes"
	"context"
	"errors"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate/jsonrpc"
)

// chaosStream takes writes every way an outbox's stream may: whole, in
// part, not at once, or failing, as a seeded dice says.
type chaosStream struct {
	mu  sync.Mutex
	rng *rand.Rand
}

var errChaos = errors.New("the stream broke")

func (s *chaosStream) roll(n int) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.rng.IntN(n)
}

func (s *chaosStream) Read() ([]byte, error) { select {} }
func (s *chaosStream) Close() error          { return nil }
func (s *chaosStream) Write(ctx context.Context, m []byte) error {
	if s.roll(200) == 0 {
		return errChaos
	}
	for range s.roll(200) { // a client slow to read: the queue fills meanwhile
		runtime.Gosched()
	}
	return nil
}
func (s *chaosStream) WriteLines(ctx context.Context, msgs [][]byte) error { return s.Write(ctx, nil) }
func (s *chaosStream) WriteRest(ctx context.Context, rest []byte) error    { return s.Write(ctx, nil) }
func (s *chaosStream) TryWrite(m []byte) (bool, []byte, error) {
	switch s.roll(10) {
	case 0:
		return false, nil, nil
	case 1:
		return true, m[len(m)/2:], nil
	case 2:
		if s.roll(20) == 0 {
			return false, nil, errChaos
		}
	}
	return true, nil, nil
}
func (s *chaosStream) TryWriteLines(msgs [][]byte) (int, []byte, error) {
	switch s.roll(10) {
	case 0:
		return 0, nil, nil
	case 1:
		return len(msgs) / 2, msgs[len(msgs)/2][1:], nil
	case 2:
		if s.roll(20) == 0 {
			return 0, nil, errChaos
		}
	}
	return len(msgs), nil, nil
}

// What client queues charge to the bound they share is given back on
// every way out of a queue (tryInline, a cork's flush, the writer, a
// failed or partial write, a close), never twice: once every queue has
// closed, the bound counts no byte and no holder, whatever the mix.
func TestOutboxShareGivenBackOnEveryPath(t *testing.T) {
	big := bytes.Repeat([]byte("x"), 96<<10)
	for seed := range uint64(3) {
		var share outboxShare
		var charged atomic.Int64 // times a queue had bytes charged to the bound: the test reaches it
		var queues []*outbox
		var wg sync.WaitGroup
		for i := range 4 {
			s := &chaosStream{rng: rand.New(rand.NewPCG(seed, uint64(i)))}
			q := newOutbox(s, 1<<20, i%2 == 0, 5*time.Second, nil)
			q.mu.Lock()
			q.share = &share
			q.mu.Unlock()
			queues = append(queues, q)
			for g := range 3 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					rng := rand.New(rand.NewPCG(seed, uint64(100*i+g)))
					var cork jsonrpc.Cork
					for n := range 300 {
						msg := big[:1+rng.IntN(len(big))]
						switch rng.IntN(5) {
						case 0:
							q.offer(msg, jsonrpc.ID{})
						case 1:
							q.offerOnce(msg[:min(len(msg), 1+rng.IntN(4))])
						case 2:
							ctx, cancel := context.WithTimeout(context.Background(), time.Millisecond)
							q.WriteRelated(ctx, msg, jsonrpc.IntID(int64(n)), true)
							cancel()
						case 3:
							q.WriteNoWait(msg, jsonrpc.IntID(int64(n)), true, &cork)
						case 4:
							cork.Flush()
						}
						q.mu.Lock()
						if q.charged > 0 {
							charged.Add(1)
						}
						if beyond := max(0, q.bytes-clientQueueFloor); q.charged > beyond || q.charged < 0 {
							t.Errorf("a queue holding %d bytes has %d charged to the shared bound; want at most %d", q.bytes, q.charged, beyond)
						}
						q.mu.Unlock()
					}
					cork.Flush()
				}()
			}
		}
		wg.Wait()
		if charged.Load() == 0 {
			t.Errorf("seed %d: no queue went past its floor: the test does not reach the shared bound", seed)
		}
		for _, q := range queues {
			q.Close()
			<-q.done
		}
		for _, q := range queues {
			q.mu.Lock()
			if q.charged != 0 {
				t.Errorf("seed %d: a closed queue holding %d bytes still has %d charged", seed, q.bytes, q.charged)
			}
			q.mu.Unlock()
		}
		if over, holders := share.over.Load(), share.holders.Load(); over != 0 || holders != 0 {
			t.Fatalf("seed %d: every queue closed, and the shared bound counts %d bytes held by %d queues", seed, over, holders)
		}
	}
}
