package auditchain

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sync"
	"sync/atomic"
	"time"
)

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
	// Replica names the replica in headers, when several write chains of
	// their own. Empty: none.
	Replica string
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
	stalled      bool      // the last write to a pipe timed out: its reader stopped reading
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
// if need be. An existing file that is a chain is continued; an older
// mcpgate's trail (JSON lines without a chain) is moved aside, as a
// rotation would, and a new chain starts; anything else is refused.
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
		if err == nil {
			w.lockFile = lf
			err = w.lock()
			if errors.Is(err, errLockBusy) {
				w.closeFiles()
				return nil, err
			}
			if err != nil { // a file system without locks (some network mounts)
				lf.Close()
				w.lockFile = nil
			}
		}
		if err != nil {
			w.opts.Log.Warn("audit trail: the lock file cannot be used, so other mcpgate processes writing the same file would break its chain", "err", err)
		}
	}
	err = w.loadState() // the lock taken above
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
	return w.writeRecord(record)
}

// writeRecord writes record, after the file's header if it has none yet.
// w.mu and the file's lock held.
func (w *Writer) writeRecord(record []byte) (uint64, error) {
	if w.needHeader {
		t := w.now()
		if err := w.writeLine(Header{Time: t, Host: w.host, PID: w.pid, PreviousFile: w.previousFile, Replica: w.opts.Replica}.record()); err != nil {
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
	n, err := w.write(buf)
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

// pipeStallLimit is how long a write to a trail that is not a regular file
// (a FIFO or a pipe to a log shipper) waits for its reader to take some.
// Every answer waits on its record, so a reader that stopped must not hold
// them all for ever: past this, records are lost (a failing trail, logged
// once) and requests are served. While the reader stays stalled, each
// write only tries (pipeRetryWait): a record waits for the pipe once per
// episode, not once per request.
const (
	pipeStallLimit = 10 * time.Second
	pipeRetryWait  = time.Millisecond
	pipeWriteLimit = time.Minute // the most one record waits for a reader that takes some
)

// write writes buf to the trail. A pipe's reader that takes some of it
// within pipeStallLimit is slow, not stalled: the write goes on while the
// reader takes some within each limit, for pipeWriteLimit at most (one
// deadline for the whole write cut a big record that a slow reader was
// taking; none would let a reader that takes a byte at a time hold every
// record behind one). w.mu held.
func (w *Writer) write(buf []byte) (int, error) {
	written := 0
	until := w.now().Add(pipeWriteLimit)
	for {
		w.setStallDeadline(until)
		n, err := w.out.Write(buf[written:])
		written += n
		if w.regular {
			return written, err
		}
		w.stalled = errors.Is(err, os.ErrDeadlineExceeded)
		if !w.stalled || n == 0 || !w.now().Before(until) {
			return written, err
		}
		w.stalled = false // it took some: wait for it a whole limit again
	}
}

// setStallDeadline bounds the next write to a pipe, and never past until,
// the end of the record's pipeWriteLimit. A regular file has no reader to
// wait for (and takes no deadline). w.mu held.
func (w *Writer) setStallDeadline(until time.Time) {
	out, ok := w.out.(interface{ SetWriteDeadline(time.Time) error })
	if w.regular || !ok {
		return
	}
	wait := pipeStallLimit
	if w.stalled {
		wait = pipeRetryWait
	}
	deadline := w.now().Add(wait)
	if until.Before(deadline) {
		deadline = until
	}
	out.SetWriteDeadline(deadline) // a file that takes none (a terminal) waits as before
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

// Regular reports whether the trail is a regular file, which a write never
// waits on for a reader (a pipe's or a device's may wait).
func (w *Writer) Regular() bool { return w.regular }

// Failures counts the records lost, ever.
func (w *Writer) Failures() uint64 { return w.failures.Load() }

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
