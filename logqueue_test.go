package main

import (
	"bytes"
	"fmt"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// stuckWriter is a stderr nobody reads until release is closed.
type stuckWriter struct {
	release chan struct{}
	mu      sync.Mutex
	out     bytes.Buffer
}

func (w *stuckWriter) Write(p []byte) (int, error) {
	<-w.release
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.out.Write(p)
}

func (w *stuckWriter) lines() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return strings.Split(strings.TrimSuffix(w.out.String(), "\n"), "\n")
}

// While stderr is not read, writes return at once, at most the bound is
// queued, and what does not fit is dropped whole; once stderr is read
// again, what was queued comes out in order, then one line counts the
// lines lost.
func TestLogQueueDropsWhenStderrIsNotRead(t *testing.T) {
	w := &stuckWriter{release: make(chan struct{})}
	lost := make(chan int, 10)
	q := newLogQueue(w, 1000, time.Minute, func(n int) {
		fmt.Fprintf(w, "lost %d\n", n)
		lost <- n
	})
	wrote := make(chan struct{})
	go func() {
		defer close(wrote)
		var wg sync.WaitGroup
		for g := range 4 {
			wg.Go(func() {
				for i := range 1000 {
					fmt.Fprintf(q, "writer %d line %04d %s\n", g, i, strings.Repeat("x", 80)) // 100 bytes
				}
			})
		}
		wg.Wait()
	}()
	select {
	case <-wrote:
	case <-time.After(10 * time.Second):
		t.Fatal("Write waited on a stderr nobody reads")
	}
	q.mu.Lock()
	queued, bytes := len(q.writes), q.bytes
	q.mu.Unlock()
	// At most 1000 bytes wait, some of them maybe taken by the stuck writer.
	if bytes > 1000 || queued > 10 {
		t.Fatalf("queued %d writes (%d bytes)", queued, bytes)
	}

	close(w.release)
	q.Close()
	close(lost)
	reports := 0
	for n := range lost {
		reports += n
	}
	written := 0
	for _, l := range w.lines() {
		var n int
		if _, err := fmt.Sscanf(l, "lost %d", &n); err == nil {
			continue
		}
		if len(l) != 99 || !strings.HasPrefix(l, "writer ") {
			t.Fatalf("line written in part or mixed with another: %q", l)
		}
		written++
	}
	if written > 10+1 || written+reports != 4000 {
		t.Fatalf("%d lines written and %d reported lost; want at most 11 written, and 4000 in all", written, reports)
	}
	if last := w.lines()[len(w.lines())-1]; !strings.HasPrefix(last, "lost ") {
		t.Fatalf("last line %q, want the count of lines lost", last)
	}
}

// Close delivers everything queued when stderr is read, and otherwise
// returns after its grace instead of waiting for a reader forever.
func TestLogQueueClose(t *testing.T) {
	t.Run("flushes", func(t *testing.T) {
		w := &stuckWriter{release: make(chan struct{})}
		close(w.release)
		q := newLogQueue(w, 1<<20, time.Minute, nil)
		for i := range 100 {
			fmt.Fprintf(q, "line %d\n", i)
		}
		q.Close()
		fmt.Fprintf(q, "after Close\n") // dropped, not written, not waited on
		if lines := w.lines(); len(lines) != 100 || lines[99] != "line 99" {
			t.Fatalf("after Close: %d lines, the last %q; want all 100", len(lines), lines[len(lines)-1])
		}
	})
	t.Run("stderr not read", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			w := &stuckWriter{release: make(chan struct{})}
			q := newLogQueue(w, 1<<20, time.Second, nil)
			fmt.Fprintf(q, "line\n")
			start := time.Now()
			q.Close()
			if waited := time.Since(start); waited != time.Second {
				t.Errorf("Close returned after %v, want the grace (1s)", waited)
			}
			close(w.release) // the writer, stuck until now, ends
		})
	})
}
