package auditchain

import (
	"errors"
	"os"
	"sync/atomic"
	"time"
)

// Sync says when appended records are flushed to the disk (fsync). Every
// mode writes each record to the file before Append returns: a crash of
// the process loses nothing; Sync decides what a crash of the machine may.
type Sync int

const (
	// SyncBatch flushes at most every BatchInterval, from a goroutine of
	// the Writer's, off the appender's path. The zero value.
	SyncBatch Sync = iota
	// SyncAlways returns from Append once the record is on the disk.
	// Appends that run at once share one fsync.
	SyncAlways
	// SyncNone leaves flushing to the operating system.
	SyncNone
)

// BatchInterval is the least time between two flushes with SyncBatch.
const BatchInterval = 100 * time.Millisecond

// syncTo returns once line seq is on the disk, flushing the file if no
// flush since has covered it.
func (w *Writer) syncTo(seq uint64) error {
	w.syncMu.Lock()
	defer w.syncMu.Unlock()
	if w.synced.Load() >= seq {
		return nil
	}
	return w.flushLocked()
}

func storeMax(v *atomic.Uint64, n uint64) {
	for {
		old := v.Load()
		if old >= n || v.CompareAndSwap(old, n) {
			return
		}
	}
}

// flushLoop flushes the file after writes, at most every w.interval, until
// Close.
func (w *Writer) flushLoop() {
	defer close(w.stopped)
	for {
		select {
		case <-w.dirty:
		case <-w.stop:
			return
		}
		w.syncMu.Lock()
		err := w.flushLocked()
		if err != nil && !w.flushFailed {
			w.opts.Log.Error("audit trail: fsync failed: records written since the last one may not survive a crash of the machine", "err", err)
		} else if err == nil && w.flushFailed {
			w.opts.Log.Info("audit trail: fsync works again")
		}
		w.flushFailed = err != nil
		w.syncMu.Unlock()
		t := time.NewTimer(w.interval)
		select {
		case <-t.C:
		case <-w.stop:
			t.Stop()
			return
		}
	}
}

// flushLocked flushes everything written so far. w.syncMu held.
func (w *Writer) flushLocked() error {
	w.mu.Lock()
	f, upTo := w.file, w.seq
	w.mu.Unlock()
	err := f.Sync()
	if errors.Is(err, os.ErrClosed) {
		err = nil // rotated meanwhile: the rotation flushed it
	}
	if err == nil {
		storeMax(&w.synced, upTo)
	}
	return err
}
