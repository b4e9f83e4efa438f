package auditchain

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"
)

// What a file's first lines say of it.
type start int

const (
	startEmpty     start = iota // nothing in it
	startHeader                 // a header: the file is a chain
	startFragments              // only what cut writes left: its header is still to come
	startOldTrail               // JSON lines, not a chain: an older mcpgate's trail
	startForeign                // something else: not ours at all
)

// headReadLimit bounds how much of a file's start is read to find its
// header; a header line is a few hundred bytes.
const headReadLimit = 64 << 10

// readStart finds a file's header: the first whole line, after any
// fragments. end is where the header line ends, its newline included.
func readStart(r io.ReaderAt, size int64) (h Header, end int64, s start, err error) {
	if size == 0 {
		return Header{}, 0, startEmpty, nil
	}
	buf := make([]byte, min(size, headReadLimit))
	if _, err := r.ReadAt(buf, 0); err != nil && err != io.EOF {
		return Header{}, 0, startForeign, err
	}
	off := 0
	for {
		i := bytes.IndexByte(buf[off:], '\n')
		if i < 0 {
			rest := buf[off:]
			if size <= headReadLimit && (len(rest) == 0 || looksLikeFragment(rest)) {
				return Header{}, 0, startFragments, nil
			}
			return Header{}, 0, startForeign, nil
		}
		line := buf[off : off+i]
		off += i + 1
		if json.Valid(line) {
			if h, ok := parseHeader(line); ok {
				return h, int64(off), startHeader, nil
			}
			var old struct {
				Time string `json:"time"`
			}
			if json.Unmarshal(line, &old) == nil && old.Time != "" {
				return Header{}, 0, startOldTrail, nil
			}
			return Header{}, 0, startForeign, nil
		}
		if !looksLikeFragment(line) {
			return Header{}, 0, startForeign, nil
		}
	}
}

// tailReadLimit bounds how much of a file's end is read to find its last
// record: a record with bodies is as large as two messages, each up to
// max_message_bytes.
const tailReadLimit = 128 << 20

// lastRecord finds the last whole record of a file, whose hash the next
// line links to. Fragments after it are skipped; a record whose newline
// was cut off still counts (it is whole). ok is false when there is none
// within tailReadLimit of the end.
func lastRecord(r io.ReaderAt, size int64) (hash string, ok bool, err error) {
	for chunk := int64(64 << 10); ; chunk *= 2 {
		from := max(0, size-chunk)
		buf := make([]byte, size-from)
		if _, err := r.ReadAt(buf, from); err != nil && err != io.EOF {
			return "", false, err
		}
		whole := buf
		if from > 0 { // the first line may begin before the chunk
			i := bytes.IndexByte(buf, '\n')
			if i < 0 {
				whole = nil
			} else {
				whole = buf[i+1:]
			}
		}
		for end := len(whole); end > 0; {
			if whole[end-1] == '\n' {
				end--
			}
			begin := bytes.LastIndexByte(whole[:end], '\n') + 1
			line := whole[begin:end]
			if _, chained := Prev(line); chained && json.Valid(line) {
				return Hash(line), true, nil
			}
			end = begin
		}
		if from == 0 || chunk >= tailReadLimit {
			return "", false, nil
		}
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
		// Another process wrote: the chain goes on from its last line. If
		// the file had no header when we looked, that process wrote one.
		load := w.loadTail
		if w.headerEnd == 0 {
			load = func(int64) error { return w.loadState() }
		}
		if err := load(ours.Size()); err != nil {
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
// last record. An older mcpgate's trail is moved aside; a file that is
// not a trail at all is refused. w.mu and the lock held.
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
	case startOldTrail:
		return w.moveOldTrail()
	case startForeign:
		return fmt.Errorf("%s holds something other than an audit trail (its first line is not a JSON record); mcpgate does not write into it: choose another audit.path", w.path)
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

// moveOldTrail moves aside an older mcpgate's trail (JSON lines, no chain),
// so that the chain starts in a file of its own.
func (w *Writer) moveOldTrail() error {
	name, err := freeRotatedName(w.path, w.now())
	if err != nil {
		return err
	}
	if err := os.Rename(w.path, name); err != nil {
		return fmt.Errorf("the file was written by an older mcpgate, without a hash chain, and could not be moved aside: %w", err)
	}
	w.opts.Log.Warn("audit trail: the file was written by an older mcpgate, without a hash chain; moved aside, a new chain starts", "moved_to", name)
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
