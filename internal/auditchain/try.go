package auditchain

// TryAppend is Append for a caller that must not wait, such as a
// connection's reader goroutine: it appends record only if nothing stands
// in the way now, and otherwise reports false with nothing written. What
// stands in the way: another Append under way (it may be rotating the
// file, or waiting up to lockWait for another process), another process
// holding the file's lock, a rotation due (a rename and an fsync), and
// SyncAlways (an fsync per record). A write to a regular file is not
// counted: it goes to the page cache.
func (w *Writer) TryAppend(record []byte) (res Result, done bool) {
	if w.opts.Sync == SyncAlways || !w.mu.TryLock() {
		return Result{}, false
	}
	done, err := w.tryAppendLocked(record)
	if done {
		res = w.noteLocked(err)
	}
	w.mu.Unlock()
	if done && err == nil && w.regular && w.opts.Sync == SyncBatch {
		select {
		case w.dirty <- struct{}{}:
		default:
		}
	}
	return res, done
}

// tryAppendLocked is appendLocked without waiting: done is false when it
// would have to. w.mu held.
func (w *Writer) tryAppendLocked(record []byte) (done bool, err error) {
	if w.closed {
		return true, ErrClosed
	}
	if w.lockFile != nil {
		if ok, err := tryLock(w.lockFile); err != nil || !ok {
			return false, nil // Append waits for it, or reports its error
		}
		defer w.unlock()
	}
	if w.regular {
		if err := w.follow(); err != nil {
			return true, err
		}
		if w.rotationDue(len(record)+len(prevOpen)+hashLen+4, w.now()) {
			return false, nil
		}
	}
	_, err = w.writeRecord(record)
	return true, err
}
