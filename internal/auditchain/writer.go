package auditchain

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
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

// lockWait bounds how long an Append waits for another process that
// writes the same file to finish its own.
const lockWait = 5 * time.Second

// Options tune a Writer. The zero value: flushed in batches, never rotated.
type Options struct {
	Sync Sync
	// MaxBytes and MaxAge rotate the file: a record that would take it past
	// MaxBytes, or that comes MaxAge after the file's header, goes to a new
	// file (see RotatedName) instead. A file holding only its header takes
	// one record, however large. Zero: no limit. Only regular files rotate.
	MaxBytes int64
	MaxAge   time.Duration
	// Host names the machine in headers. Empty: os.Hostname.
	Host string
	// Log hears of what no appender is told: a file that was not a chain
	// and was moved aside, a rotation or a batch flush that failed. Nil:
	// nothing is logged.
	Log *slog.Logger
}

// Result is what became of one Append.
type Result struct {
	Err error // nil: the record is in the chain (on the disk, with SyncAlways)
	// Began is true for the first failure after a success: an episode of
	// failures begins. Ended is true for the first success after one, and
	// Lost says how many records the episode lost.
	Began, Ended bool
	Lost         int
}

// ErrClosed is returned by an Append after Close.
var ErrClosed = errors.New("audit trail closed")

// Writer appends records to a chain: a file it may rotate, or a stream.
// Its methods may be called concurrently.
//
// Several processes (mcpgate once per client, all with one config) may
// write one file: on Unix they take turns under an advisory lock on a
// file next to it, PATH.lock, and each picks up the chain where the last
// left it, so the file holds one chain whoever wrote it.
//
// A failed write does not stop the Writer: the record is lost (Result
// says so), the chain goes on from the last whole record, and the next
// write succeeds if the disk lets it.
type Writer struct {
	opts     Options
	path     string // "": a stream
	host     string
	pid      int
	now      func() time.Time
	interval time.Duration // between batch flushes; BatchInterval but in tests

	// mu is held for one Append: its write, and what comes before it
	// (catching up with other processes, a rotation). Writes are the one
	// thing it exists for: the only I/O under it is the trail's own.
	mu           sync.Mutex
	out          io.Writer // the file, or the stream
	file         *os.File  // the file; nil for a stream
	regular      bool      // file is a regular file: locked, followed, rotated, flushed
	lockFile     *os.File  // see lock; nil: none
	last         string    // hash of the last whole line of the chain
	torn         bool      // the file ends mid-line, after a cut write
	size         int64     // the file's size after our last write: any other size means another process wrote
	headerEnd    int64     // where the file's header ends; 0: no header in it yet
	started      time.Time // the file's header time; zero: no header yet
	needHeader   bool      // the file has no header: the next Append writes one first
	previousFile string    // the name the last file was rotated to, for the next header
	seq          uint64    // whole lines written
	lost         int       // records lost in the current episode of failures
	closed       bool
	rotateFailed bool // the last rotation failed (logged once)
	flushFailed  bool // the last batch flush failed (logged once); guarded by syncMu

	failures atomic.Uint64 // records lost, ever
	failing  atomic.Bool   // the last Append failed

	// syncMu is the right to fsync, held across one: appenders with
	// SyncAlways that come while it is held wait, and most find their
	// record already flushed by the one before (group commit).
	syncMu sync.Mutex
	synced atomic.Uint64 // lines up to this seq are on the disk

	dirty   chan struct{} // SyncBatch: 1-buffered; a line written since the last flush
	stop    chan struct{} // closed by Close: the flusher ends
	stopped chan struct{} // closed when the flusher has ended
}

func newWriter(opts Options) *Writer {
	w := &Writer{opts: opts, host: opts.Host, pid: os.Getpid(), now: time.Now, interval: BatchInterval, last: Genesis, needHeader: true}
	if w.host == "" {
		w.host, _ = os.Hostname()
	}
	if w.opts.Log == nil {
		w.opts.Log = slog.New(slog.DiscardHandler)
	}
	return w
}

// NewStream returns a Writer that appends to out, which it never rotates,
// flushes or closes. The chain starts with a header at the first Append.
func NewStream(out io.Writer, opts Options) *Writer {
	w := newWriter(opts)
	w.out = out
	return w
}

// Open returns a Writer that appends to the file at path, created (0600)
// if need be. An existing file that is a chain is continued; one that is
// not (an older mcpgate's trail) is moved aside, as a rotation would, and
// a new chain starts.
func Open(path string, opts Options) (*Writer, error) {
	w := newWriter(opts)
	w.path = path
	f, err := openFile(path)
	if err != nil {
		return nil, err
	}
	w.file, w.out = f, f
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	w.regular = fi.Mode().IsRegular()
	if !w.regular {
		return w, nil // a device or a pipe: written to, nothing more
	}
	if lockable {
		lf, err := os.OpenFile(path+".lock", os.O_RDWR|os.O_CREATE, 0o600)
		if err != nil {
			w.opts.Log.Warn("audit trail: no lock file, so other mcpgate processes writing the same file would break its chain", "err", err)
		}
		w.lockFile = lf
	}
	if err := w.lock(); err != nil {
		w.closeFiles()
		return nil, err
	}
	err = w.loadState()
	w.unlock()
	if err != nil {
		w.closeFiles()
		return nil, err
	}
	if opts.Sync == SyncBatch {
		w.dirty, w.stop, w.stopped = make(chan struct{}, 1), make(chan struct{}), make(chan struct{})
		go w.flushLoop()
	}
	return w, nil
}

// openFile opens path for appending, and for reading where it can: a
// chain is continued from its last line.
func openFile(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		f, err = os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	}
	return f, err
}

// Append adds record, a JSON object on one line without a "prev" member,
// to the chain.
func (w *Writer) Append(record []byte) Result {
	w.mu.Lock()
	seq, err := w.appendLocked(record)
	res := w.noteLocked(err)
	w.mu.Unlock()
	if err != nil || !w.regular {
		return res
	}
	switch w.opts.Sync {
	case SyncAlways:
		if err := w.syncTo(seq); err != nil {
			w.mu.Lock()
			failed := w.noteLocked(fmt.Errorf("fsync: %w", err))
			w.mu.Unlock()
			res.Err, res.Began = failed.Err, failed.Began
		}
	case SyncBatch:
		select {
		case w.dirty <- struct{}{}:
		default:
		}
	}
	return res
}

func (w *Writer) appendLocked(record []byte) (uint64, error) {
	if w.closed {
		return 0, ErrClosed
	}
	if err := w.lock(); err != nil {
		return 0, err
	}
	defer w.unlock()
	if w.regular {
		if err := w.follow(); err != nil {
			return 0, err
		}
		if now := w.now(); w.rotationDue(len(record)+len(prevOpen)+hashLen+4, now) {
			w.rotateOrLog(now)
		}
	}
	if w.needHeader {
		t := w.now()
		if err := w.writeLine(Header{Time: t, Host: w.host, PID: w.pid, PreviousFile: w.previousFile}.record()); err != nil {
			return 0, err
		}
		w.needHeader, w.previousFile, w.started, w.headerEnd = false, "", t, w.size
	}
	if err := w.writeLine(record); err != nil {
		return 0, err
	}
	return w.seq, nil
}

// writeLine writes record linked to the chain, in one write. A write cut
// short leaves a fragment that the next line does not link to, and that
// it starts after (on a line of its own); one cut only before its newline
// leaves a whole record, which the next line does link to.
func (w *Writer) writeLine(record []byte) error {
	line := Link(w.last, record)
	buf := make([]byte, 0, len(line)+2)
	if w.torn {
		buf = append(buf, '\n')
	}
	buf = append(buf, line...)
	buf = append(buf, '\n')
	n, err := w.out.Write(buf)
	if err == nil && n < len(buf) {
		err = io.ErrShortWrite
	}
	w.size += int64(n)
	if n > 0 {
		w.torn = buf[n-1] != '\n'
	}
	if n >= len(buf)-1 {
		w.last = Hash(line)
		w.seq++
		return nil
	}
	return err
}

// noteLocked counts a failed Append and tells where episodes of failures
// begin and end. w.mu held.
func (w *Writer) noteLocked(err error) Result {
	res := Result{Err: err}
	if err != nil {
		w.failures.Add(1)
		res.Began = w.lost == 0
		w.lost++
	} else if w.lost > 0 {
		res.Ended, res.Lost = true, w.lost
		w.lost = 0
	}
	w.failing.Store(err != nil)
	return res
}

// Failing reports whether the last Append failed.
func (w *Writer) Failing() bool { return w.failing.Load() }

// Failures counts the records lost, ever.
func (w *Writer) Failures() uint64 { return w.failures.Load() }

// lock takes the lock other processes writing the file take too. flock
// cannot be given a deadline, and one process stuck (a hung disk) must not
// stall this one for ever: it is tried without blocking, again and again
// for up to lockWait. Another process holds it for one write, so the first
// try or one soon after gets it.
func (w *Writer) lock() error {
	if w.lockFile == nil {
		return nil
	}
	deadline := time.Now().Add(lockWait)
	pause := 20 * time.Microsecond
	for {
		ok, err := tryLock(w.lockFile)
		if err != nil {
			return fmt.Errorf("locking %s: %w", w.lockFile.Name(), err)
		}
		if ok {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("another process has held %s for %v: is another mcpgate stuck writing the audit trail?", w.lockFile.Name(), lockWait)
		}
		time.Sleep(pause)
		pause = min(2*pause, 5*time.Millisecond)
	}
}

func (w *Writer) unlock() {
	if w.lockFile != nil {
		unlock(w.lockFile)
	}
}

// follow brings w up to date with the file at path, which another process
// may have written to, or rotated (path then names a new file). w.mu and
// the lock held.
func (w *Writer) follow() error {
	ours, err := w.file.Stat()
	if err != nil {
		return err
	}
	if ours.Size() != w.size {
		// Another process wrote: the chain goes on from its last line.
		if err := w.loadTail(ours.Size()); err != nil {
			return err
		}
	}
	now, err := os.Stat(w.path)
	if err == nil && os.SameFile(ours, now) {
		return nil
	}
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	// Rotated by another process (its new file is there, with its header),
	// or moved away by someone else (a new file is started).
	f, err := openFile(w.path)
	if err != nil {
		return err
	}
	w.file.Close()
	w.file, w.out = f, f
	return w.loadState()
}

// loadState reads where the file at w.file stands: its header, and its
// last record. A file that is not a chain is moved aside. w.mu and the
// lock held.
func (w *Writer) loadState() error {
	fi, err := w.file.Stat()
	if err != nil {
		return err
	}
	size := fi.Size()
	w.size, w.torn, w.headerEnd, w.started, w.needHeader = size, false, 0, time.Time{}, false
	h, end, s, err := readStart(w.file, size)
	if err != nil {
		return err
	}
	switch s {
	case startEmpty:
		w.needHeader = true
		return nil
	case startForeign:
		return w.moveForeign()
	case startFragments:
		w.needHeader = true
	case startHeader:
		w.headerEnd, w.started = end, h.Time
	}
	return w.loadTail(size)
}

// loadTail finds the file's last record, the one the next line links to.
func (w *Writer) loadTail(size int64) error {
	hash, ok, err := lastRecord(w.file, size)
	if err != nil {
		return err
	}
	if ok {
		w.last = hash
	}
	w.size, w.torn = size, false
	if size > 0 {
		var b [1]byte
		if _, err := w.file.ReadAt(b[:], size-1); err != nil {
			return err
		}
		w.torn = b[0] != '\n'
	}
	return nil
}

// moveForeign moves aside a file that is not a chain (an older mcpgate's
// trail), so that the chain starts in a file of its own.
func (w *Writer) moveForeign() error {
	name, err := freeRotatedName(w.path, w.now())
	if err != nil {
		return err
	}
	if err := os.Rename(w.path, name); err != nil {
		return fmt.Errorf("the file is not an audit chain (written by an older mcpgate?) and could not be moved aside: %w", err)
	}
	w.opts.Log.Warn("audit trail: the file was not an audit chain (written by an older mcpgate?); moved aside, a new chain starts", "moved_to", name)
	f, err := openFile(w.path)
	if err != nil {
		return err
	}
	w.file.Close()
	w.file, w.out = f, f
	w.previousFile, w.last = filepath.Base(name), Genesis
	w.size, w.torn, w.headerEnd, w.started, w.needHeader = 0, false, 0, time.Time{}, true
	return nil
}

// rotationDue reports whether a line of about n bytes written at now is
// to start a new file. A file with nothing but its header is never
// rotated: it takes one record, however large.
func (w *Writer) rotationDue(n int, now time.Time) bool {
	if w.headerEnd == 0 || w.size <= w.headerEnd {
		return false
	}
	return w.opts.MaxBytes > 0 && w.size+int64(n) > w.opts.MaxBytes ||
		w.opts.MaxAge > 0 && now.Sub(w.started) >= w.opts.MaxAge
}

func (w *Writer) rotateOrLog(now time.Time) {
	err := w.rotate(now)
	if err != nil && !w.rotateFailed {
		w.opts.Log.Error("audit trail: rotation failed; records go on in the current file", "err", err)
	}
	if err == nil && w.rotateFailed {
		w.opts.Log.Info("audit trail: rotation works again")
	}
	w.rotateFailed = err != nil
}

// rotate gives the file its rotated name and starts a new one at path,
// whose header links to the last line of the old one. w.mu and the lock
// held: no other process writes meanwhile.
func (w *Writer) rotate(now time.Time) error {
	name, err := freeRotatedName(w.path, now)
	if err != nil {
		return err
	}
	if w.opts.Sync != SyncNone {
		// The old file whole on the disk before a new one links to it.
		if err := w.file.Sync(); err != nil {
			return fmt.Errorf("fsync before rotating: %w", err)
		}
		storeMax(&w.synced, w.seq)
	}
	if err := os.Rename(w.path, name); err != nil {
		return err
	}
	f, err := openFile(w.path)
	if err != nil {
		// The next Append finds nothing at path and starts a file there.
		w.previousFile = filepath.Base(name)
		return err
	}
	w.file.Close()
	w.file, w.out = f, f
	w.previousFile = filepath.Base(name)
	w.size, w.torn, w.headerEnd, w.started, w.needHeader = 0, false, 0, time.Time{}, true
	if w.opts.Sync == SyncAlways {
		syncDir(filepath.Dir(w.path)) // the renaming on the disk too; best effort
	}
	return nil
}

func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
}

// syncTo returns once line seq is on the disk, flushing the file if no
// flush since has covered it.
func (w *Writer) syncTo(seq uint64) error {
	w.syncMu.Lock()
	defer w.syncMu.Unlock()
	if w.synced.Load() >= seq {
		return nil
	}
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
		err = nil
	}
	if err == nil {
		storeMax(&w.synced, upTo)
	}
	return err
}

// Close flushes the file (unless SyncNone) and closes it. A stream is
// left open: it is its owner's.
func (w *Writer) Close() error {
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		return nil
	}
	w.closed = true
	w.mu.Unlock()
	if w.stop != nil {
		close(w.stop)
		<-w.stopped
	}
	if w.file == nil {
		return nil
	}
	var err error
	if w.regular && w.opts.Sync != SyncNone {
		err = w.file.Sync()
	}
	return errors.Join(err, w.closeFiles())
}

func (w *Writer) closeFiles() error {
	err := w.file.Close()
	if w.lockFile != nil {
		w.lockFile.Close()
	}
	return err
}
