package main

import (
	"io"
	"sync"
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
