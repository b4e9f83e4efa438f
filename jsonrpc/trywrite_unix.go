//go:build linux || darwin

package jsonrpc

import (
	"errors"
	"io"
	"syscall"
)

// nonblockingWriter writes to a file descriptor in non-blocking mode
// without going through the runtime's poller: one attempt, never a wait.
type nonblockingWriter struct{ rc syscall.RawConn }

var errWouldBlock = errors.New("write would block")

// nonblocking returns w's raw connection when w is a file in non-blocking
// mode (a pipe from os.Pipe is), or nil. A blocking file (a terminal, a
// regular file) could make an attempt wait, so it gets none.
func nonblocking(w io.Writer) *nonblockingWriter {
	sc, ok := w.(syscall.Conn)
	if !ok {
		return nil
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return nil
	}
	nonblock := false
	rc.Control(func(fd uintptr) {
		flags, _, errno := syscall.Syscall(syscall.SYS_FCNTL, fd, syscall.F_GETFL, 0)
		nonblock = errno == 0 && flags&syscall.O_NONBLOCK != 0
	})
	if !nonblock {
		return nil
	}
	return &nonblockingWriter{rc}
}

// tryWrite makes one write(2) of b: how much of it went out, and
// errWouldBlock when the pipe had no room at all.
func (w *nonblockingWriter) tryWrite(b []byte) (int, error) {
	var n int
	var werr error
	err := w.rc.Write(func(fd uintptr) bool {
		for {
			n, werr = syscall.Write(int(fd), b)
			if werr != syscall.EINTR {
				return true // done either way: never wait for room
			}
		}
	})
	if n < 0 {
		n = 0
	}
	if werr == syscall.EAGAIN {
		return n, errWouldBlock
	}
	if werr != nil {
		return n, werr
	}
	return n, err
}
