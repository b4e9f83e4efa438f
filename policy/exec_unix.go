//go:build unix

package policy

import (
	"os"
	"os/exec"
	"syscall"
)

// startExecInOwnGroup starts the program in a process group of its own, so
// that a kill reaches what it started too (a shell's children).
func startExecInOwnGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

// killExecGroup kills the program and its group. The program itself first: if
// it was reaped already, its id (and so its group's) may be another's by
// now, and the group is left alone.
func killExecGroup(p *os.Process) error {
	if err := p.Kill(); err != nil {
		return err
	}
	return syscall.Kill(-p.Pid, syscall.SIGKILL)
}
