package proxy

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate/jsonrpc"
)

// Requests that many goroutines write at once to a server's stdin, a real
// non-blocking pipe that fills (partial writes, the rest left to the
// writer goroutine), with answers and notifications among them, reach the
// server each whole, once, and in the order each goroutine wrote them: no
// caller ever writes beside the writer goroutine or another caller. Also
// with one P.
func TestOutboxRequestsWrittenTogetherStayWholeAndInOrder(t *testing.T) {
	for _, procs := range []int{runtime.GOMAXPROCS(0), 1} {
		t.Run(fmt.Sprintf("GOMAXPROCS=%d", procs), func(t *testing.T) {
			defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
			writeManyThroughPipe(t)
		})
	}
}

func writeManyThroughPipe(t *testing.T) {
	const writers, each = 8, 150
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	q := newOutbox(jsonrpc.NewLineStream(strings.NewReader(""), w, w, 0), upstreamQueueBytes, false, 10*time.Second, nil)
	got := make(chan map[int][]int, 1)
	go func() { got <- readLines(t, r) }()

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var wg sync.WaitGroup
	for g := range writers {
		wg.Go(func() {
			for i := range each {
				// Sizes from a few bytes to past the pipe's room left,
				// so that some writes go out in part.
				msg := fmt.Appendf(nil, `{"g":%d,"i":%d,"pad":%q}`, g, i, strings.Repeat("x", (g*997+i*131)%6000))
				final := i%5 == 4 // an answer, written as before (tryInline)
				if taken, err := q.WriteNoWait(msg, jsonrpc.ID{}, final, nil); err != nil {
					t.Errorf("writer %d, message %d: %v", g, i, err)
					return
				} else if !taken {
					if err := q.Write(ctx, msg); err != nil {
						t.Errorf("writer %d, message %d: %v", g, i, err)
						return
					}
				}
			}
		})
	}
	wg.Wait()
	q.Close() // delivers what is queued, then closes the pipe: the reader ends
	lines := <-got
	for g := range writers {
		if len(lines[g]) != each {
			t.Errorf("writer %d: %d messages arrived, want %d", g, len(lines[g]), each)
		}
		for i, n := range lines[g] {
			if n != i {
				t.Errorf("writer %d: message %d arrived as number %d, want in order, once each", g, n, i)
				break
			}
		}
	}
}

// readLines reads r to its end, each line a whole message of a writer g,
// and returns the numbers i of each writer's messages as they came.
func readLines(t *testing.T, r *os.File) map[int][]int {
	lines := map[int][]int{}
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var m struct{ G, I int }
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Errorf("line %.80q is not a whole message (two writes' bytes interleaved?): %v", sc.Text(), err)
			continue
		}
		lines[m.G] = append(lines[m.G], m.I)
	}
	if err := sc.Err(); err != nil {
		t.Errorf("reading the pipe: %v", err)
	}
	return lines
}
