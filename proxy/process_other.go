//go:build !unix

package proxy

import (
	"fmt"
	"os/exec"
)

func setProcessGroup(*exec.Cmd) {}

func terminate(cmd *exec.Cmd) { cmd.Process.Kill() }

func kill(cmd *exec.Cmd) { cmd.Process.Kill() }

func killGroup(*exec.Cmd) {}

func describeExit(ee *exec.ExitError) string {
	return fmt.Sprintf("exited with status %d", ee.ExitCode())
}
