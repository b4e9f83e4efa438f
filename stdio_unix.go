//go:build unix

package main

import (
	"io"
	"os"
	"syscall"
)

// pollable returns f as a file the Go runtime can poll, when it is a pipe
// or a socket (how MCP clients start servers): reads then park a goroutine
// instead of a thread, and a request read from the client is handled on the
// reading thread's processor without waiting for the runtime to take it
// back from a blocked system call. Terminals and files are left alone:
// their non-blocking mode would be shared with whoever else has them.
func pollable(f *os.File, name string) io.ReadWriter {
	fd := f.Fd() // once: Fd puts a pollable file back into blocking mode
	var st syscall.Stat_t
	if err := syscall.Fstat(int(fd), &st); err != nil {
		return f
	}
	if st.Mode&syscall.S_IFMT != syscall.S_IFIFO && st.Mode&syscall.S_IFMT != syscall.S_IFSOCK {
		return f
	}
	if err := syscall.SetNonblock(int(fd), true); err != nil {
		return f
	}
	return os.NewFile(fd, name)
}
