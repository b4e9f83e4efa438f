package proxy

import (
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

	cmd    *exec.Cmd
	stdin  *os.File // our end of the child's stdin
	stdout *os.File // our end of the child's stdout

	exited     chan struct{} // closed when Wait has returned
	waitErr    error         // set before exited is closed
	stderrDone chan struct{} // closed when the stderr copier has returned

	mu         sync.Mutex
	lastStderr string // last non-empty stderr line, for error messages
}

// startProcess starts s.Command with pipes for stdio. Every line the child
// writes to stderr goes to logLine. The child runs in its own process group
// so that stopping it also stops whatever it started.
func startProcess(s config.Server, maxMessage int, logLine func(string)) (*process, error) {
	cmd := exec.Command(s.Command, s.Args...)
	cmd.Dir = s.Cwd
	cmd.Env = os.Environ()
	for k, v := range s.Env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	setProcessGroup(cmd)

	// Plain *os.File pipes: Wait then returns when the child exits, without
	// waiting for grandchildren that inherited the pipes.
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		return nil, err
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		outR.Close()
		outW.Close()
		return nil, err
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, errW
	err = cmd.Start()
	inR.Close()
	outW.Close()
	errW.Close()
	if err != nil {
		inW.Close()
		outR.Close()
		errR.Close()
		return nil, fmt.Errorf("cannot start %q: %w", s.Command, unwrapExec(err))
	}
	p := &process{cmd: cmd, stdin: inW, stdout: outR, exited: make(chan struct{}), stderrDone: make(chan struct{})}
	// Closing the stream closes only the child's stdin, as the spec's
	// shutdown asks: the child may still write while it winds down, and
	// closing its stdout under it would kill it with EPIPE. Our end of
	// stdout is closed once the child has exited (stop).
	p.Stream = jsonrpc.NewLineStream(outR, inW, inW, maxMessage)
	go func() {
		p.waitErr = cmd.Wait()
		close(p.exited)
	}()
	go p.copyStderr(errR, logLine)
	return p, nil
}

func unwrapExec(err error) error {
	var ee *exec.Error
	if errors.As(err, &ee) {
		return ee.Err
	}
	return err
}

func (p *process) copyStderr(r io.ReadCloser, logLine func(string)) {
	defer close(p.stderrDone)
	defer r.Close()
	readStderrLines(r, func(line string) {
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

func (p *process) gone() <-chan struct{} { return p.exited }

func (p *process) reason(wait time.Duration) string { return p.exitReason(wait) }

// stop ends the process the way the MCP spec asks for stdio: close its
// stdin, wait, SIGTERM, wait, SIGKILL. Whatever else is left in its process
// group is killed too, so no grandchild outlives the gateway.
func (p *process) stop(grace time.Duration) {
	p.stdin.Close()
	select {
	case <-p.exited:
	case <-time.After(grace):
		terminate(p.cmd)
		select {
		case <-p.exited:
		case <-time.After(grace):
			kill(p.cmd)
			<-p.exited
		}
	}
	killGroup(p.cmd)
	p.stdout.Close()
	select {
	case <-p.stderrDone:
	case <-time.After(grace):
	}
}
