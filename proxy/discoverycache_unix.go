//go:build unix

package proxy

import (
	"errors"
	"os"
	"syscall"
)

// openNoFollow opens path for reading, failing on a symbolic link (ELOOP)
// rather than following it: in a shared cache directory, someone else
// could point it at any file.
func openNoFollow(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW, 0)
	if errors.Is(err, syscall.ELOOP) {
		return nil, errSymlink
	}
	return f, err
}

// ownedByMe reports whether this user owns the file: in a shared cache
// directory, a file of another's is not one mcpgate wrote for us.
func ownedByMe(fi os.FileInfo) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && int(st.Uid) == os.Getuid()
}
