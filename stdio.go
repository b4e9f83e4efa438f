package main

import (
	"errors"
	"io"
	"sync"
	"syscall"
)

// leavingWriter is the client's end of a stdio session. A write to it that
// fails means the client has left (it closed its end of the pipe: EPIPE),
// even while stdin stays open: left is called, once, to end the session as
// EOF on stdin would.
type leavingWriter struct {
	w    io.Writer
	once sync.Once
	left func(err error)
}

// Unwrap returns the client's pipe, for jsonrpc to raise its size when a
// big message goes through it (not to write to: a write must come here).
func (l *leavingWriter) Unwrap() io.Writer { return l.w }

func (l *leavingWriter) Write(p []byte) (int, error) {
	n, err := l.w.Write(p)
	if err != nil {
		l.once.Do(func() { l.left(err) })
	}
	return n, err
}

// SyscallConn lets the session's stream try a write to the client without
// waiting (jsonrpc.TryWriter) when the client's end is a pipe: an answer
// then goes out on the goroutine that has it, with no handoff to the
// writer. A try that fails is written again the usual way, through Write,
// which sees the error.
func (l *leavingWriter) SyscallConn() (syscall.RawConn, error) {
	if sc, ok := l.w.(syscall.Conn); ok {
		return sc.SyscallConn()
	}
	return nil, errors.ErrUnsupported
}
