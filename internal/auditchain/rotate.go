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
