//go:build !linux

package proxy

import (
	"fmt"
	"os"
	"os/exec"
	"time"
)

// RunWarden is Linux only: elsewhere Options.Wardens has no effect and no
// warden is started.
func RunWarden(args []string) int {
	fmt.Fprintln(os.Stderr, "mcpgate: "+WardenCommand+" runs on Linux only")
	return 2
}

func wardenCommand(*exec.Cmd, time.Duration) (*exec.Cmd, stopSignals) { return nil, nil }
