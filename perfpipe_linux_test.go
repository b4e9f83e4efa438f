package main

import (
	"io"
	"os"
	"strings"
	"syscall"
	"testing"
)

// perfBigPipe is the pipe size mcpgate raises a pipe to once a message of
// perfGrowPipeAt bytes or more goes through it (jsonrpc/pipesize_linux.go):
// the relay floor and the direct client raise theirs the same way, so that
// a big result's rows compare what the peers do with a message, not how
// many times the kernel wakes them for it. A copy of jsonrpc's constants:
// the floors depend on nothing of the gateway's (see perfClient).
const (
	perfBigPipe    = 1 << 20
	perfGrowPipeAt = 1 << 20
)

const (
	fSetPipeSize = 1031 // F_SETPIPE_SZ
	fGetPipeSize = 1032 // F_GETPIPE_SZ
)

// growPerfPipe raises the pipe behind x to perfBigPipe when x is a pipe's
// end (a file, or something that embeds one) smaller than that. Anything
// else, and any failure, is left alone: the pipe only stays slower.
func growPerfPipe(x any) {
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
		if errno != 0 || int(size) >= perfBigPipe {
			return
		}
		syscall.Syscall(syscall.SYS_FCNTL, fd, fSetPipeSize, perfBigPipe)
	})
}

// perfPipeSize is the size of the pipe behind x, or 0 if it has none.
func perfPipeSize(x any) int {
	sc, ok := x.(syscall.Conn)
	if !ok {
		return 0
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return 0
	}
	var size uintptr
	var errno syscall.Errno
	rc.Control(func(fd uintptr) {
		size, _, errno = syscall.Syscall(syscall.SYS_FCNTL, fd, fGetPipeSize, 0)
	})
	if errno != 0 {
		return 0
	}
	return int(size)
}

// The floors raise their pipes for a big message as mcpgate does, and only
// then: the relay (either way) both of its pipes, the direct client the one
// it reads.
func TestPerfFloorsRaisePipesForBigLines(t *testing.T) {
	big := `{"jsonrpc":"2.0","id":7,"result":{"text":"` + strings.Repeat("x", 2<<20) + `"}}` + "\n"
	small := `{"jsonrpc":"2.0","id":6,"result":{}}` + "\n"
	for _, c := range []struct {
		name  string
		lines string
		want  func(int) bool
		about string
	}{
		{"small", small, func(size int) bool { return size < perfBigPipe }, "the default"},
		{"big", small + big, func(size int) bool { return size >= perfBigPipe }, "1 MiB or more"},
	} {
		for relay, whole := range map[string]bool{"relay": false, "relay-whole": true} {
			t.Run(relay+"/"+c.name, func(t *testing.T) {
				srcR, srcW := perfTestPipe(t)
				dstR, dstW := perfTestPipe(t)
				go func() {
					io.WriteString(srcW, c.lines)
					srcW.Close()
				}()
				drained := make(chan struct{})
				go func() {
					io.Copy(io.Discard, dstR)
					close(drained)
				}()
				if err := copyLines(dstW, srcR, whole); err != nil {
					t.Fatal(err)
				}
				for _, end := range []struct {
					name string
					f    *os.File
				}{{"from the server", srcR}, {"to the client", dstW}} {
					if size := perfPipeSize(end.f); !c.want(size) {
						t.Errorf("the pipe %s holds %d bytes; want %s", end.name, size, c.about)
					}
				}
				dstW.Close()
				<-drained
			})
		}
		t.Run("client/"+c.name, func(t *testing.T) {
			r, w := perfTestPipe(t)
			client := newPerfClient(r, io.Discard)
			io.WriteString(w, c.lines)
			w.Close()
			<-client.done
			if size := perfPipeSize(r); !c.want(size) {
				t.Errorf("the pipe the client reads holds %d bytes; want %s", size, c.about)
			}
		})
	}
}

func perfTestPipe(t *testing.T) (*os.File, *os.File) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close(); w.Close() })
	return r, w
}
