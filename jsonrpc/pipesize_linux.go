package jsonrpc

import (
	"io"
	"syscall"
)

// Linux's pipes hold 64 KiB by default. A 50 MiB message written into one
// goes 64 KiB at a time, the writer and the reader waking each other 800
// times: to the client, that was 20 to 60 ms after the message was whole,
// where a pipe of 1 MiB takes 18. So a stream that carries a big message
// raises its pipe to bigPipe, once, as the message goes: a stream that only
// ever carries small ones keeps the default, and with it the kernel's
// per-user budget of pipe memory (pipe-user-pages-soft: past it, every new
// pipe of the user's gets 8 KiB), which a gateway with many servers would
// otherwise spend for nothing. 1 MiB is what an unprivileged process may
// ask for by default (/proc/sys/fs/pipe-max-size); a refusal leaves the
// pipe as it was. The kernel holds a pipe's pages only while they are
// full, so a bigger pipe costs memory only while a big message is in it.
const bigPipe = 1 << 20

const (
	fSetPipeSize = 1031 // F_SETPIPE_SZ
	fGetPipeSize = 1032 // F_GETPIPE_SZ
)

// growPipe raises the pipe behind x, a reader or a writer, to bigPipe,
// when x is a pipe (or wraps one: Unwrap) smaller than that. Anything
// else, and any failure, is left alone: the pipe only stays slower.
func growPipe(x any) {
	for range 8 {
		u, ok := x.(interface{ Unwrap() io.Writer })
		if !ok {
			break
		}
		x = u.Unwrap()
	}
	sc, ok := x.(syscall.Conn)
	if !ok {
		return
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return
	}
	rc.Control(func(fd uintptr) {
		size, _, errno := syscall.Syscall(syscall.SYS_FCNTL, fd, fGetPipeSize, 0)
		if errno != 0 || int(size) >= bigPipe {
			return // not a pipe, or big enough
		}
		syscall.Syscall(syscall.SYS_FCNTL, fd, fSetPipeSize, bigPipe)
	})
}
