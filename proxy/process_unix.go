//go:build unix

package proxy

import (
	"fmt"
	"os/exec"
	"syscall"
)

func setProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	setParentDeathSignal(cmd.SysProcAttr)
}

// groupSignals stop a server started directly, in a process group of its
// own: each step reaches the whole group.
type groupSignals struct{ cmd *exec.Cmd }

func (g groupSignals) terminate() { syscall.Kill(-g.cmd.Process.Pid, syscall.SIGTERM) }

func (g groupSignals) kill() { syscall.Kill(-g.cmd.Process.Pid, syscall.SIGKILL) }

func (g groupSignals) force() { g.kill() }

// cleanup kills what the upstream left running in its group. A group id
// is not reused while the group has members, so this reaches only ours.
func (g groupSignals) cleanup() { g.kill() }

func describeExit(ee *exec.ExitError) string {
	if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return fmt.Sprintf("killed by signal %v", ws.Signal())
	}
	return fmt.Sprintf("exited with status %d", ee.ExitCode())
}
