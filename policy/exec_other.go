//go:build !unix

package policy

import (
	"os"
	"os/exec"
)

func startInOwnGroup(*exec.Cmd) {}

// killGroup kills the program; without process groups, only the program.
func killGroup(p *os.Process) error { return p.Kill() }
