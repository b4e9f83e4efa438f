//go:build !unix

package proxy

import (
	"fmt"
	"os/exec"
)

func setProcessGroup(*exec.Cmd) {}

// groupSignals stop a server started directly; without process groups,
// only the server itself is reached.
type groupSignals struct{ cmd *exec.Cmd }

func (g groupSignals) terminate() { g.cmd.Process.Kill() }

func (g groupSignals) kill() { g.cmd.Process.Kill() }

func (g groupSignals) force() { g.cmd.Process.Kill() }

func (g groupSignals) cleanup() {}

func describeExit(ee *exec.ExitError) string {
	return fmt.Sprintf("exited with status %d", ee.ExitCode())
}
