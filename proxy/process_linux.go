package proxy

import "syscall"

// setParentDeathSignal makes the kernel stop the upstream if mcpgate itself
// dies without a chance to clean up (SIGKILL, a crash).
func setParentDeathSignal(a *syscall.SysProcAttr) { a.Pdeathsig = syscall.SIGTERM }
