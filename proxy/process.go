package proxy

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
	"time"

	"github.com/mcpgate/mcpgate/config"
	"github.com/mcpgate/mcpgate/jsonrpc"
)

// process is one stdio upstream's child process and its pipes: the link to
// a local server. Messages are lines on its stdin and stdout.
type process struct {
	jsonrpc.Stream // closing it closes our ends of both pipes

	cmd     *exec.Cmd   // the server, or its warden
	signals stopSignals // how stop asks it to end, and forces it
	stdin   *os.File    // our end of the child's stdin
	stdout  *os.File    // our end of the child's stdout

	exited     chan struct{} // closed when Wait has returned
	waitErr    error         // set before exited is closed
	stderrDone chan struct{} // closed when the stderr copier has returned

	mu         sync.Mutex
	lastStderr string // last non-empty stderr line, for error messages
}

// TryWrite lets the outbox write to the server's stdin on the caller's
// goroutine when the pipe has room (see jsonrpc.TryWriter).
func (p *process) TryWrite(msg []byte) (bool, []byte, error) {
	if tw, ok := p.Stream.(jsonrpc.TryWriter); ok {
		return tw.TryWrite(msg)
	}
	return false, nil, nil
}

// WriteRest writes what TryWrite left.
func (p *process) WriteRest(ctx context.Context, rest []byte) error {
	return p.Stream.(jsonrpc.TryWriter).WriteRest(ctx, rest)
}

// WriteLines writes several messages to the server's stdin at once (see
// jsonrpc.LinesWriter).
func (p *process) WriteLines(ctx context.Context, msgs [][]byte) error {
	if lw, ok := p.Stream.(jsonrpc.LinesWriter); ok {
		return lw.WriteLines(ctx, msgs)
	}
	for _, m := range msgs {
		if err := p.Stream.Write(ctx, m); err != nil {
			return err
		}
	}
	return nil
}

// stopSignals are the steps of stopping a process after its stdin closed.
type stopSignals interface {
	terminate() // ask it to stop (SIGTERM)
	kill()      // make it stop (SIGKILL; a warden kills everything at once)
	force()     // when kill did not work: SIGKILL the process itself
	cleanup()   // once it has exited: end what it left running
}

// processOptions say how stdio servers are started and stopped.
type processOptions struct {
	maxMessage int           // limit on one message from the server
	grace      time.Duration // each step of stopping it
	wardens    bool          // start it under a warden, where there are (Linux)
	// redactCut hides a secret's start left at the end of a stderr line
	// cut short (see readStderrLines); nil: nothing is hidden.
	redactCut func(string) string
}

// wardenStartTimeout bounds the wait for a warden's report that its
// server runs: starting a process takes milliseconds.
const wardenStartTimeout = 10 * time.Second

// startProcess starts s.Command with pipes for stdio. Every line the child
// writes to stderr goes to logLine. The child runs in its own process group
// so that stopping it also stops whatever it started; under a warden
// (warden_linux.go), so does anything that left the group, and it is all
// stopped even if mcpgate is killed.
func startProcess(s config.Server, opts processOptions, logLine func(string)) (*process, error) {
	server := exec.Command(s.Command, s.Args...)
	if server.Err != nil {
		return nil, fmt.Errorf("cannot start %q: %w", s.Command, unwrapExec(server.Err))
	}
	server.Dir = s.Cwd
	server.Env = os.Environ()
	for k, v := range s.Env {
		server.Env = append(server.Env, k+"="+v)
	}
	var cmd *exec.Cmd
	var signals stopSignals
	if opts.wardens {
		cmd, signals = wardenCommand(server, opts.grace)
	}
	if cmd == nil {
		cmd, signals = server, groupSignals{server}
		setProcessGroup(server)
	}
	warden := cmd != server

	// Plain *os.File pipes: Wait then returns when the child exits, without
	// waiting for grandchildren that inherited the pipes.
	n := 3
	if warden {
		n++ // the warden's status
	}
	pipes, err := openPipes(n)
	if err != nil {
		return nil, err
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = pipes[0].r, pipes[1].w, pipes[2].w
	if warden {
		cmd.ExtraFiles = []*os.File{pipes[3].w}
	}
	err = cmd.Start()
	pipes[0].r.Close()
	pipes[1].w.Close()
	pipes[2].w.Close()
	if warden {
		pipes[3].w.Close()
		if err == nil {
			err = awaitWarden(cmd, pipes[3].r)
		}
		pipes[3].r.Close()
	}
	if err != nil {
		pipes[0].w.Close()
		pipes[1].r.Close()
		pipes[2].r.Close()
		return nil, fmt.Errorf("cannot start %q: %w", s.Command, unwrapExec(err))
	}
	inW, outR, errR := pipes[0].w, pipes[1].r, pipes[2].r
	p := &process{cmd: cmd, signals: signals, stdin: inW, stdout: outR, exited: make(chan struct{}), stderrDone: make(chan struct{})}
	// Closing the stream closes only the child's stdin, as the spec's
	// shutdown asks: the child may still write while it winds down, and
	// closing its stdout under it would kill it with EPIPE. Our end of
	// stdout is closed once the child has exited (stop).
	p.Stream = jsonrpc.NewLineStream(outR, inW, inW, opts.maxMessage)
	go func() {
		p.waitErr = cmd.Wait()
		close(p.exited)
	}()
	go p.copyStderr(errR, opts.redactCut, logLine)
	return p, nil
}

type pipe struct{ r, w *os.File }

// openPipes opens n pipes, or none.
func openPipes(n int) ([]pipe, error) {
	pipes := make([]pipe, 0, n)
	for range n {
		r, w, err := os.Pipe()
		if err != nil {
			for _, p := range pipes {
				p.r.Close()
				p.w.Close()
			}
			return nil, err
		}
		pipes = append(pipes, pipe{r, w})
	}
	return pipes, nil
}

// awaitWarden reads a warden's report that its server runs, or why not.
// A warden that reports nothing is killed (its server, if any, dies with
// it by its parent-death signal) and reaped.
func awaitWarden(warden *exec.Cmd, status *os.File) error {
	status.SetReadDeadline(time.Now().Add(wardenStartTimeout))
	report, err := io.ReadAll(io.LimitReader(status, 4096))
	if string(report) == wardenStarted {
		return nil
	}
	warden.Process.Kill()
	warden.Wait()
	switch {
	case len(report) > 0:
		return errors.New(string(report))
	case err != nil:
		return fmt.Errorf("its warden process did not report (%v); does this program hand %s to proxy.RunWarden?", err, WardenCommand)
	}
	return fmt.Errorf("its warden process ended without starting it; does this program hand %s to proxy.RunWarden?", WardenCommand)
}

func unwrapExec(err error) error {
	var ee *exec.Error
	if errors.As(err, &ee) {
		return ee.Err
	}
	return err
}

func (p *process) copyStderr(r io.ReadCloser, redactCut func(string) string, logLine func(string)) {
	defer close(p.stderrDone)
	defer r.Close()
	readStderrLines(r, redactCut, func(line string) {
		p.mu.Lock()
		p.lastStderr = line
		p.mu.Unlock()
		logLine(line)
	})
}

// exitReason describes how the process ended, with its last stderr line.
// It waits up to wait for the exit to be known.
func (p *process) exitReason(wait time.Duration) string {
	select {
	case <-p.exited:
	case <-time.After(wait):
		return "stopped responding (its output closed)"
	}
	// The last stderr lines usually arrive with the exit; let them land.
	select {
	case <-p.stderrDone:
	case <-time.After(100 * time.Millisecond):
	}
	reason := "exited"
	var ee *exec.ExitError
	switch {
	case p.waitErr == nil:
		reason = "exited with status 0"
	case errors.As(p.waitErr, &ee):
		reason = describeExit(ee)
	default:
		reason = "exited: " + p.waitErr.Error()
	}
	p.mu.Lock()
	last := p.lastStderr
	p.mu.Unlock()
	if last != "" {
		reason += ": " + last
	}
	return reason
}

// awaitExit waits for a process told to die, within bounds: a warden
// that is stuck (stopped, wedged) is killed itself, and one that does not
// go even then (a process in uninterruptible sleep) is left to the kernel
// rather than hang mcpgate's shutdown.
func (p *process) awaitExit(grace time.Duration) {
	select {
	case <-p.exited:
		return
	case <-time.After(grace):
	}
	p.signals.force()
	select {
	case <-p.exited:
	case <-time.After(grace):
	}
}

func (p *process) gone() <-chan struct{} { return p.exited }

// relatedTo: nothing on stdio says which request a server's request is for.
func (p *process) relatedTo(jsonrpc.ID) (jsonrpc.ID, bool) { return jsonrpc.ID{}, false }

func (p *process) reason(wait time.Duration) string { return p.exitReason(wait) }

// stop ends the process the way the MCP spec asks for stdio: close its
// stdin, wait, SIGTERM, wait, SIGKILL. Whatever it left running is killed
// too, so no grandchild outlives the gateway.
func (p *process) stop(grace time.Duration) {
	p.stdin.Close()
	select {
	case <-p.exited:
	case <-time.After(grace):
		p.signals.terminate()
		select {
		case <-p.exited:
		case <-time.After(grace):
			p.signals.kill()
			p.awaitExit(grace)
		}
	}
	p.signals.cleanup()
	p.stdout.Close()
	select {
	case <-p.stderrDone:
	case <-time.After(grace):
	}
}
