package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
)

// relayFloorMain is the floor any stdio gateway stands on (issue 13): it
// starts one server and copies lines both ways without parsing them, which
// is the two pipe hops and the one process in between that a gateway must
// add, and nothing else. What mcpgate spends beyond it is its own.
//
//	relayfloor [-whole] COMMAND [ARG...]
//
// It reads its own stdin and stdout through the runtime's poller as mcpgate
// does (pollable, stdio_unix.go), so that the two differ in what they do
// with a message, not in how they wait for one. A line longer than the
// buffer is passed on in pieces as it comes, never held whole; with
// -whole, each line is held until its newline has come and then written in
// one write, as any gateway that checks a message before passing it on
// must: the floor of a big result through such a gateway, where the relay
// overlaps the two pipe hops. Its exit status is the server's.
func relayFloorMain(args []string) int {
	whole := len(args) > 0 && args[0] == "-whole"
	if whole {
		args = args[1:]
	}
	if len(args) < 1 {
		fmt.Fprintln(os.Stderr, "usage: relayfloor [-whole] COMMAND [ARG...]")
		return 2
	}
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Stderr = os.Stderr
	toServer, err := cmd.StdinPipe()
	if err == nil {
		var fromServer io.ReadCloser
		if fromServer, err = cmd.StdoutPipe(); err == nil {
			if err = cmd.Start(); err == nil {
				return relayLines(cmd, toServer, fromServer, whole)
			}
		}
	}
	fmt.Fprintln(os.Stderr, "relayfloor:", err)
	return 1
}

// relayLines copies the client's lines to the server until the client
// closes stdin (then closes the server's), and the server's to the client
// until the server closes stdout; then it waits for the server. whole: see
// copyLines.
func relayLines(cmd *exec.Cmd, toServer io.WriteCloser, fromServer io.Reader, whole bool) int {
	stdin := pollable(os.Stdin, "/dev/stdin")
	stdout := pollable(os.Stdout, "/dev/stdout")
	// This copy ends with the process: a client may keep stdin open after
	// the server has gone, and nothing more can be delivered then.
	go func() {
		copyLines(toServer, stdin, whole)
		toServer.Close()
	}()
	copyLines(stdout, fromServer, whole)
	err := cmd.Wait()
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		return exit.ExitCode()
	case err != nil:
		fmt.Fprintln(os.Stderr, "relayfloor:", err)
		return 1
	}
	return 0
}

// copyLines copies src to dst a line at a time, each flushed as it ends:
// what a line-framed relay must do so that no message waits for the next.
// Once a line reaches perfGrowPipeAt bytes, it raises both pipes as mcpgate
// raises its own for a big message (growPerfPipe). whole: a line longer
// than the buffer is gathered (in memory reused from line to line, as a
// gateway's pool would) and written once whole.
func copyLines(dst io.Writer, src io.Reader, whole bool) error {
	r := bufio.NewReaderSize(src, 64<<10)
	w := bufio.NewWriterSize(dst, 64<<10)
	lineSize, grown := 0, false
	var held []byte // whole: the start of a long line
	for {
		line, err := r.ReadSlice('\n')
		lineSize += len(line)
		if lineSize >= perfGrowPipeAt && !grown {
			grown = true
			growPerfPipe(src)
			growPerfPipe(dst)
		}
		if whole && (len(held) > 0 || errors.Is(err, bufio.ErrBufferFull)) {
			held = append(held, line...)
			line = nil
			if !errors.Is(err, bufio.ErrBufferFull) {
				line, held = held, held[:0]
			}
		}
		if _, werr := w.Write(line); werr != nil {
			return werr
		}
		switch {
		case err == nil:
			lineSize = 0
			if err := w.Flush(); err != nil {
				return err
			}
		case errors.Is(err, bufio.ErrBufferFull):
			// The rest of a long line: keep copying it.
		default:
			w.Flush()
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
	}
}
