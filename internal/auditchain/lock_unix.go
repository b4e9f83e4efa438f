//go:build unix

package auditchain

import (
	"errors"
	"os"
	"syscall"
)

// tryLock takes f's exclusive advisory lock if no other open file holds
// it; false if one does.
func tryLock(f *os.File) (bool, error) {
	conn, err := f.SyscallConn()
	if err != nil {
		return false, err
	}
	var lerr error
	if err := conn.Control(func(fd uintptr) {
		for {
			lerr = syscall.Flock(int(fd), syscall.LOCK_EX|syscall.LOCK_NB)
			if lerr != syscall.EINTR {
				return
			}
		}
	}); err != nil {
		return false, err
	}
	if errors.Is(lerr, syscall.EWOULDBLOCK) {
		return false, nil
	}
	return lerr == nil, lerr
}

func unlock(f *os.File) error {
	conn, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var uerr error
	if err := conn.Control(func(fd uintptr) { uerr = syscall.Flock(int(fd), syscall.LOCK_UN) }); err != nil {
		return err
	}
	return uerr
}

// lockable: other mcpgate processes writing the same trail take turns.
const lockable = true
