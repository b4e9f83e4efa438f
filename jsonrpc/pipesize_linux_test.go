package jsonrpc

import (
	"context"
	"io"
	"os"
	"strings"
	"syscall"
	"testing"
)

// A stream raises its pipe to 1 MiB once a big message goes through it,
// written or read (through a writer that says what it wraps, too), and
// leaves it at the default while the messages are small.
func TestPipeRaisedForBigMessages(t *testing.T) {
	big := `"` + strings.Repeat("x", 2<<20) + `"`
	small := `{"jsonrpc":"2.0","method":"m"}`

	t.Run("write", func(t *testing.T) {
		r, w := pipe(t)
		go io.Copy(io.Discard, r)
		s := NewLineStream(strings.NewReader(""), wrapped{w}, nil, 0)
		s.Write(context.Background(), []byte(small))
		if got := pipeSize(t, w); got >= bigPipe {
			t.Fatalf("after a small message the pipe holds %d bytes; want the default", got)
		}
		if err := s.(PartsWriter).WriteParts(context.Background(), [][]byte{[]byte(big)}, ID{}, true); err != nil {
			t.Fatal(err)
		}
		if got := pipeSize(t, w); got < bigPipe {
			t.Errorf("after a %d-byte message the pipe holds %d bytes; want %d", len(big), got, bigPipe)
		}
	})
	t.Run("read", func(t *testing.T) {
		r, w := pipe(t)
		go func() {
			w.Write([]byte(small + "\n" + big + "\n"))
			w.Close()
		}()
		s := NewLineStream(r, io.Discard, nil, 4<<20)
		if _, err := s.Read(); err != nil {
			t.Fatal(err)
		}
		if got := pipeSize(t, r); got >= bigPipe {
			t.Fatalf("after a small message the pipe holds %d bytes; want the default", got)
		}
		if line, err := s.Read(); err != nil || len(line) != len(big) {
			t.Fatalf("Read = %d bytes, %v", len(line), err)
		}
		if got := pipeSize(t, r); got < bigPipe {
			t.Errorf("after a %d-byte line the pipe holds %d bytes; want %d", len(big), got, bigPipe)
		}
	})
}

// wrapped is a writer in front of a pipe, as mcpgate's stdout is.
type wrapped struct{ w io.Writer }

func (w wrapped) Write(p []byte) (int, error) { return w.w.Write(p) }
func (w wrapped) Unwrap() io.Writer           { return w.w }

func pipe(t *testing.T) (*os.File, *os.File) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close(); w.Close() })
	return r, w
}

func pipeSize(t *testing.T, f *os.File) int {
	rc, err := f.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var size uintptr
	var errno syscall.Errno
	rc.Control(func(fd uintptr) {
		size, _, errno = syscall.Syscall(syscall.SYS_FCNTL, fd, fGetPipeSize, 0)
	})
	if errno != 0 {
		t.Fatalf("F_GETPIPE_SZ: %v", errno)
	}
	return int(size)
}
