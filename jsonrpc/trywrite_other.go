//go:build !(linux || darwin)

package jsonrpc

import (
	"errors"
	"io"
)

// nonblockingWriter: writes are never tried without waiting here.
type nonblockingWriter struct{}

var errWouldBlock = errors.New("write would block")

func nonblocking(io.Writer) *nonblockingWriter { return nil }

func (*nonblockingWriter) tryWrite([]byte) (int, error) { return 0, errWouldBlock }
