//go:build !unix

package policy

import (
	"os"
	"os/exec"
)

func startExecInOwnGroup(*exec.Cmd) {}

// killExecGroup kills the program; without process groups, only the program.
func killExecGroup(p *os.Process) error { return p.Kill() }
