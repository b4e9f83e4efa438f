//go:build !unix

package main

import (
	"os"
	"syscall"
)

// sleeperProcAttr: sessions are a unix notion; elsewhere the sleeper stays
// in the test's own group.
func sleeperProcAttr(bool) *syscall.SysProcAttr { return nil }

func processExists(pid int) bool {
	p, err := os.FindProcess(pid)
	if err == nil {
		p.Release()
	}
	return err == nil
}
