package jsonrpc

import (
	"bytes"
	"io"

	"github.com/mcpgate/mcpgate/internal/rawjson"
)

// lineReader splits a byte stream into lines, each in a buffer of its own
// that the caller keeps (a message decoded from it points into it). A line
// that fits in the read buffer is copied out once, at its size. A longer
// one is read straight into its own buffer, which starts at the size of
// the last long line (a little more; copied out if it turns out far too
// big) and goes on into blocks when that is not enough (see readLong):
// a run of 50 MiB results costs one 50 MiB allocation each and one copy
// (the kernel's), where growing by append's quarters through bufio made
// dozens of buffers and copies. Nothing big is kept between lines: the
// read buffer is one chunk (more only until what came with a big line is
// read), and the size of the last long line is only a number.
type lineReader struct {
	r     io.Reader
	buf   []byte // chunk bytes (more for a while after a big line, see readLong); buf[pos:end] is read and not yet returned
	chunk int
	pos   int
	end   int
	err   error // the reader's error, returned once buf is drained
	limit int
	hint  int    // the size of the last long line
	slab  []byte // where small lines are copied to, one after another (see own)
	// scan validates a long line as it arrives (see readLong).
	scan  rawjson.Incremental
	grown bool // r's pipe was raised for big lines (growPipe)
	// beforeRead, if not nil, is called before each read of r (see
	// ReadAheadStream).
	beforeRead func()
	// watch, if not nil, starts the watcher of each long line (see
	// LineWatchStream).
	watch func(first []byte) LineWatcher
}

// Small lines share slabs: a tools/call and its answer are a few hundred
// bytes each, and an allocation apiece was a tenth of what a call
// allocated. A slab is freed once no message in it is referenced, so a
// message kept for long keeps at most one slab alive.
const (
	slabSize    = 16 << 10
	maxSlabLine = 1 << 10
)

// own copies a line out of the read buffer into memory the caller keeps.
func (lr *lineReader) own(line []byte) []byte {
	if len(line) > maxSlabLine {
		return bytes.Clone(line)
	}
	if cap(lr.slab)-len(lr.slab) < len(line) {
		lr.slab = make([]byte, 0, slabSize)
	}
	start := len(lr.slab)
	lr.slab = append(lr.slab, line...)
	return lr.slab[start:len(lr.slab):len(lr.slab)] // an append to it cannot reach the next line
}

// collectBefore is the size of a line before which the garbage is
// collected (see readLong).
const collectBefore = 4 << 20

// readChunk is the read buffer's size, and the most read at once.
const readChunk = 64 << 10

func newLineReader(r io.Reader, limit int) *lineReader {
	return newLineReaderSize(r, limit, readChunk)
}

// newLineReaderSize is newLineReader with a read buffer of chunk bytes
// (tests use small ones to reach the long-line path).
func newLineReaderSize(r io.Reader, limit, chunk int) *lineReader {
	return &lineReader{r: r, buf: make([]byte, chunk), chunk: chunk, limit: limit}
}

// fill reads more into buf after what is there. It reports false when
// nothing more can come (err is set).
func (lr *lineReader) fill() bool {
	if lr.err != nil {
		return false
	}
	if lr.pos == lr.end && len(lr.buf) != lr.chunk {
		lr.buf, lr.pos, lr.end = make([]byte, lr.chunk), 0, 0 // what came after a big line is read
	}
	if lr.pos > 0 {
		lr.end = copy(lr.buf, lr.buf[lr.pos:lr.end])
		lr.pos = 0
	}
	if lr.beforeRead != nil {
		lr.beforeRead()
	}
	for range 100 { // a reader returning 0, nil that often is broken
		n, err := lr.r.Read(lr.buf[lr.end:])
		lr.end += n
		if err != nil {
			lr.err = err
			return n > 0
		}
		if n > 0 {
			return true
		}
	}
	lr.err = io.ErrNoProgress
	return false
}

// readLine returns the next line without its '\n'. A last line without a
// newline comes with the reader's error (io.EOF). Past limit bytes it keeps
// a prefix, skips the rest of the line and reports *TooLargeError, so one
// bad message does not end the stream.
func (lr *lineReader) readLine() ([]byte, error) {
	for {
		if i := bytes.IndexByte(lr.buf[lr.pos:lr.end], '\n'); i >= 0 {
			line := lr.buf[lr.pos : lr.pos+i]
			lr.pos += i + 1
			if len(line) > lr.limit {
				return nil, lr.tooLarge(line, len(line))
			}
			return lr.own(line), nil
		}
		if lr.end-lr.pos == len(lr.buf) {
			return lr.readLong()
		}
		if !lr.fill() {
			line := lr.buf[lr.pos:lr.end]
			lr.pos = lr.end
			if len(line) > lr.limit {
				return nil, lr.tooLarge(line, len(line))
			}
			if len(line) == 0 {
				return nil, lr.err
			}
			return lr.own(line), lr.err
		}
	}
}

func (lr *lineReader) tooLarge(start []byte, size int) *TooLargeError {
	keep := min(prefixKeep, lr.limit, len(start))
	return &TooLargeError{Size: size, Limit: lr.limit, Prefix: bytes.Clone(start[:keep])}
}

// readLong reads a line longer than buf, which buf holds the start of.
//
// The line is read straight into a buffer of the size the last long line
// had, and a little. One that outgrows it goes on into blocks (half the
// line so far, up to spillBlock bytes) and is joined into one buffer of
// its exact size at the end: a 50 MiB line
// costs its blocks and that buffer (twice its size at the peak), where
// growing a buffer by doubling held the last two (2.5 times) and left the
// smaller ones to the collector (four times, in a process's peak memory).
func (lr *lineReader) readLong() ([]byte, error) {
	chunk := len(lr.buf)
	size := 4 * chunk // a first long line: a guess
	if lr.hint > 0 {
		size = lr.hint + min(lr.hint/longLineSpare, chunk) + readChunk/16
	}
	if size >= collectBefore {
		// The last big line is most likely garbage by now (its answer
		// written): collected first, its memory is reused for this one,
		// where the collector's pacing would let two or three such
		// buffers coexist (twice the live heap), and the process's peak
		// memory with them (see collectFor).
		collectFor(size)
	}
	// A long line's buffer is never pooled nor reused: rawjson's memo
	// knows a line it scanned by its first byte's identity.
	line := make([]byte, 0, min(size, lr.limit+1))
	line = append(line, lr.buf[lr.pos:lr.end]...)
	lr.pos, lr.end = 0, 0
	// Each piece is validated as it arrives, while the peer writes the
	// next: once the newline comes, only the last piece is left, and the
	// split is remembered for Decode (rawjson's memo), which then does not
	// read the megabytes again. Spilled blocks are not contiguous with
	// the start: they are scanned once joined.
	lr.scan.Reset()
	lr.scan.Feed(line)
	var watcher LineWatcher
	if lr.watch != nil {
		if watcher = lr.watch(line); watcher != nil {
			watcher.Piece(line)
		}
	}
	var spilled [][]byte // the line so far is spilled[0], spilled[1], …, line
	size = 0             // the bytes in spilled
	for {
		if size+len(line) > lr.limit {
			watcher = abandon(watcher)
			return nil, lr.skipRest(firstOf(spilled, line), size+len(line))
		}
		if len(line) == cap(line) {
			watcher = abandon(watcher)
			spilled = append(spilled, line)
			size += len(line)
			// Half what the line has so far, up to a block: a line
			// a little longer than the last (read into a buffer of that
			// one's size and a little) spills a little.
			line = make([]byte, 0, min(spillBlock, max(chunk, size/2), lr.limit+1-size))
		}
		if lr.err != nil {
			watcher = abandon(watcher)
			return lr.join(spilled, size, line), lr.err
		}
		// A chunk at a time, and once the line is big, as much as its
		// pipe holds (growPipe): a 50 MiB line then takes 50 reads, not
		// 800. What follows the newline goes to buf, grown for it if need
		// be (and back to its size once read, see fill).
		want := chunk
		if size+len(line) >= bigReadAfter*chunk {
			want = bigRead
		}
		room := line[len(line):min(cap(line), len(line)+want)]
		if lr.beforeRead != nil {
			lr.beforeRead()
		}
		n, err := lr.r.Read(room)
		if err != nil {
			lr.err = err
		}
		if i := bytes.IndexByte(room[:n], '\n'); i >= 0 {
			if rest := room[i+1 : n]; len(rest) > len(lr.buf) {
				lr.buf = make([]byte, len(rest))
			}
			lr.end = copy(lr.buf, room[i+1:n])
			line = line[:len(line)+i]
			if size+len(line) > lr.limit {
				watcher = abandon(watcher)
				return nil, lr.tooLarge(firstOf(spilled, line), size+len(line))
			}
			line = lr.join(spilled, size, line)
			lr.hint = len(line)
			if cap(line)-len(line) > max(len(line), 1<<20) {
				// Far smaller than the last long line: a message kept for
				// long (a cached list) must not pin that one's size.
				watcher = abandon(watcher)
				line = bytes.Clone(line)
			}
			lr.scan.Finish(line)
			if watcher != nil {
				watcher.Done(line)
			}
			return line, nil
		}
		line = line[:len(line)+n]
		if spilled == nil {
			lr.scan.Feed(line)
		}
		if watcher != nil && n > 0 {
			watcher.Piece(line)
		}
		if !lr.grown && size+len(line) >= growPipeAt {
			lr.grown = true
			growPipe(lr.r)
		}
	}
}

// longLineSpare: a long line's buffer is the last long line's size and a
// 1/longLineSpare of it (a chunk at most, and 4 KiB more): room for a line
// a little longer than the last, so that the same again, as a server's
// lists are, fits without spilling. A whole chunk spare (64 KiB) was a
// quarter of a 248 KB list zeroed and collected for nothing.
const longLineSpare = 32

// bigRead is the most a read asks for once a line is bigReadAfter chunks
// long: a pipe raised for big messages holds that much (growPipe).
const (
	bigRead      = 1 << 20
	bigReadAfter = 16
)

// spillBlock is the size of the blocks a line that outgrows its buffer
// goes on into: big enough that a 64 MiB line takes a few dozen, small
// enough that the last one's unused part is little.
const spillBlock = 4 << 20

// join returns the line whose start was spilled (size bytes) and whose
// rest is last, in one buffer of its size.
func (lr *lineReader) join(spilled [][]byte, size int, last []byte) []byte {
	if spilled == nil {
		return last
	}
	line := make([]byte, 0, size+len(last))
	for _, b := range spilled {
		line = append(line, b...)
	}
	return append(line, last...)
}

// firstOf returns the first of the buffers a line is in.
func firstOf(spilled [][]byte, last []byte) []byte {
	if len(spilled) > 0 {
		return spilled[0]
	}
	return last
}

// skipRest discards the rest of an over-size line, of which seen bytes
// were read, start first, and reports it.
func (lr *lineReader) skipRest(start []byte, seen int) error {
	e := lr.tooLarge(start, 0)
	size := seen
	for {
		if i := bytes.IndexByte(lr.buf[lr.pos:lr.end], '\n'); i >= 0 {
			e.Size = size + i
			lr.pos += i + 1
			return e
		}
		size += lr.end - lr.pos
		lr.pos, lr.end = 0, 0
		if !lr.fill() {
			e.Size = size + lr.end
			lr.pos = lr.end
			return e
		}
	}
}

// abandon tells w, if any, that its line will not be returned in the
// memory it saw, and returns nil: no watcher.
func abandon(w LineWatcher) LineWatcher {
	if w != nil {
		w.Done(nil)
	}
	return nil
}
