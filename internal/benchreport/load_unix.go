//go:build unix

package main

import (
	"syscall"
	"time"
)

// childrenCPU is the user and system CPU of our children that were waited
// for, and of theirs.
func childrenCPU() time.Duration {
	var u syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_CHILDREN, &u); err != nil {
		return 0
	}
	return time.Duration(u.Utime.Nano() + u.Stime.Nano())
}
