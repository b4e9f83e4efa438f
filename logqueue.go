package main

import (
	"fmt"
	"io"
	"sync"
	"time"
)

// Bounds on what waits to be written to stderr.
const (
	logQueueBytes = 1 << 20
	// logFlushGrace is how long Close lets the queue drain: a reader that
	// reads at all takes 1 MiB in far less; one that never reads must not
	// hold up mcpgate's exit.
	logFlushGrace = time.Second
)

// logQueue is the way to mcpgate's stderr, for the log and the servers'
// relayed stderr lines. A client that leaves stderr open but never reads
// it fills the pipe, and a write to a full pipe waits: were the writes
// direct, every goroutine that logs would stop, and with it whatever
// request it serves. Instead Write copies the bytes into a queue bounded in
// bytes and returns at once; when the queue is full, the write is dropped
// (whole: lines never come out half written) and counted, and once the
// queue has room again one line says how many were lost. One goroutine
// writes to stderr, each queued write in one Write, so lines from
// concurrent writers never interleave.
type logQueue struct {
	out        io.Writer
	limit      int            // bytes queued, at most (one larger write goes when nothing is queued)
	grace      time.Duration  // how long Close waits for the queue to drain
	reportLoss func(lost int) // writes the line saying lost writes were dropped, to out

	mu      sync.Mutex
	wake    *sync.Cond // signalled when writes are queued, or on close
	writes  [][]byte   // waiting for the writer
	bytes   int        // in writes, and in the batch being written
	dropped int        // writes dropped since the last report
	closed  bool
	done    chan struct{} // closed when the writer goroutine has returned
}

// newLogQueue starts the writer to out. reportLoss, called by the writer
// after an episode of drops, writes one line about it to out, in the log's
// format; nil: a plain line.
func newLogQueue(out io.Writer, limit int, grace time.Duration, reportLoss func(lost int)) *logQueue {
	q := &logQueue{out: out, limit: limit, grace: grace, reportLoss: reportLoss, done: make(chan struct{})}
	if q.reportLoss == nil {
		q.reportLoss = func(lost int) {
			fmt.Fprintf(out, "mcpgate: %d log lines lost: stderr is not being read fast enough\n", lost)
		}
	}
	q.wake = sync.NewCond(&q.mu)
	go q.writeLoop()
	return q
}

// Write queues a copy of p, or drops it when the queue is full or closed.
// It never waits for stderr, and never fails: the log is best-effort.
func (q *logQueue) Write(p []byte) (int, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed {
		return len(p), nil // mcpgate is exiting: not a loss to report
	}
	if q.bytes > 0 && q.bytes+len(p) > q.limit {
		q.dropped++
		return len(p), nil
	}
	q.writes = append(q.writes, append([]byte(nil), p...))
	q.bytes += len(p)
	q.wake.Signal()
	return len(p), nil
}

func (q *logQueue) writeLoop() {
	defer close(q.done)
	for {
		q.mu.Lock()
		for len(q.writes) == 0 && q.dropped == 0 && !q.closed {
			q.wake.Wait()
		}
		batch, dropped := q.writes, q.dropped
		q.writes, q.dropped = nil, 0
		if len(batch) == 0 && dropped == 0 {
			q.mu.Unlock()
			return // closed, and everything is out
		}
		q.mu.Unlock()
		for _, p := range batch {
			q.out.Write(p) // an error (EPIPE: the client closed stderr) loses this write only
			q.mu.Lock()
			q.bytes -= len(p)
			q.mu.Unlock()
		}
		if dropped > 0 {
			q.reportLoss(dropped)
		}
	}
}

// Close stops taking writes and lets the writer deliver what is queued,
// waiting up to the grace. A writer still stuck on a stderr nobody reads is
// left to end with the process: a write to a pipe cannot be interrupted
// unless the pipe is made non-blocking, and stderr is often the client's
// own (the MCP TypeScript SDK's servers inherit it by default), so
// that would change it under the client too.
func (q *logQueue) Close() error {
	q.mu.Lock()
	q.closed = true
	q.wake.Signal()
	q.mu.Unlock()
	t := time.NewTimer(q.grace)
	defer t.Stop()
	select {
	case <-q.done:
	case <-t.C:
	}
	return nil
}

// lossReport is how the gateway's log queue says it dropped lines: a
// warning in the log's format, written by the queue's writer straight to
// stderr.
func (c *commonFlags) lossReport(stderr io.Writer) func(lost int) {
	log, err := c.logger(stderr)
	if err != nil {
		return nil // setup reports the bad flag
	}
	return func(lost int) {
		log.Warn("log lines lost: stderr is not being read fast enough", "lines", lost)
	}
}
