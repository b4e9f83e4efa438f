//go:build linux || darwin

package jsonrpc

import (
	"errors"
	"io"
	"syscall"
)

// nonblockingWriter writes to a file descriptor in non-blocking mode
// without going through the runtime's poller: one attempt, never a wait.
// Its caller holds the stream's turn, so one attempt runs at a time: the
// attempt's buffer and outcome live here, and the function handed to the
// raw connection is made once (a closure per write cost three allocations
// on every request to a server).
type nonblockingWriter struct {
	rc      syscall.RawConn
	attempt func(fd uintptr) bool // w.writeOnce
	b       []byte                // what the attempt writes
	n       int                   // what it wrote
	err     error                 // and how it failed
}

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
	nw := &nonblockingWriter{rc: rc}
	nw.attempt = nw.writeOnce
	return nw
}

// tryWrite makes one write(2) of b: how much of it went out, and
// errWouldBlock when the pipe had no room at all.
func (w *nonblockingWriter) tryWrite(b []byte) (int, error) {
	w.b, w.n, w.err = b, 0, nil
	err := w.rc.Write(w.attempt)
	n, werr := w.n, w.err
	w.b, w.err = nil, nil
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

func (w *nonblockingWriter) writeOnce(fd uintptr) bool {
	for {
		w.n, w.err = syscall.Write(int(fd), w.b)
		if w.err != syscall.EINTR {
			return true // done either way: never wait for room
		}
	}
}
