package auditchain

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// rotatedStamp is the time in a rotated file's name: sortable, and free
// of the colons some file systems and tools refuse.
const rotatedStamp = "2006-01-02T15-04-05.000Z"

// RotatedName is the name the file at path gets when it is rotated at t:
// the time goes before the extension, so "mcpgate-audit.jsonl" becomes
// "mcpgate-audit.2026-11-26T01-19-33.698Z.jsonl". Rotated files keep that
// name for good (nothing is renamed again), sort by name in the order
// they were written, and match the glob "mcpgate-audit*.jsonl" with the
// active file. The time is when the file was rotated: its last record is
// older, the next file's first record newer.
func RotatedName(path string, t time.Time) string {
	dir, base := filepath.Split(path)
	ext := filepath.Ext(base)
	stem := strings.TrimSuffix(base, ext)
	if stem == "" { // ".jsonl": all extension
		stem, ext = base, ""
	}
	return dir + stem + "." + t.UTC().Format(rotatedStamp) + ext
}

// freeRotatedName is RotatedName, or, when a file of that name exists (two
// rotations in one millisecond), the name a millisecond later that is
// free: names keep sorting in the order the files were written.
func freeRotatedName(path string, t time.Time) (string, error) {
	for range 1000 {
		name := RotatedName(path, t)
		if _, err := os.Lstat(name); errors.Is(err, fs.ErrNotExist) {
			return name, nil
		} else if err != nil {
			return "", err
		}
		t = t.Add(time.Millisecond)
	}
	return "", fmt.Errorf("no free name to rotate %s to: %s and the 999 names after it exist", path, RotatedName(path, t))
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
