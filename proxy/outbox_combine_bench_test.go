package proxy

import (
	"os"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate/jsonrpc"
)

// BenchmarkOutboxRequestBesideBusyGoroutines is how long a POST's request
// takes to be written to a server's pipe (WriteNoWait, from a goroutine of
// its own, as a POST's) while twice as many goroutines as there are Ps
// burn CPU (policy scans of big texts): a yield (outboxcombine.go) puts
// the POST behind all of them, with the server's queue claimed meanwhile.
func BenchmarkOutboxRequestBesideBusyGoroutines(b *testing.B) {
	r, w, err := os.Pipe()
	if err != nil {
		b.Fatal(err)
	}
	defer r.Close()
	go func() {
		buf := make([]byte, 1<<16)
		for {
			if _, err := r.Read(buf); err != nil {
				return
			}
		}
	}()
	q := newOutbox(jsonrpc.NewLineStream(strings.NewReader(""), w, w, 0), upstreamQueueBytes, false, time.Second, nil)
	defer q.Close()
	var stop atomic.Bool
	var busy sync.WaitGroup
	for range 2 * runtime.GOMAXPROCS(0) {
		busy.Go(func() {
			for x := 0; !stop.Load(); x++ {
			}
		})
	}
	defer busy.Wait()
	defer stop.Store(true)
	msg := []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo"}}`)
	written := make(chan struct{})
	b.ResetTimer()
	for range b.N {
		go func() {
			q.WriteNoWait(msg, jsonrpc.ID{}, false, nil)
			written <- struct{}{}
		}()
		<-written
	}
}
