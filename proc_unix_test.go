//go:build unix

package main

import "syscall"

func sleeperProcAttr(setsid bool) *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setsid: setsid}
}

// processExists: signal 0 asks the kernel whether pid names a process.
func processExists(pid int) bool { return syscall.Kill(pid, 0) == nil }
