//go:build unix

package main

import "syscall"

// fdLimit is how many descriptors this process may open: Go raises the
// soft limit to the hard one at start, and mcpgate's own process does the
// same.
func fdLimit() uint64 {
	var l syscall.Rlimit
	if syscall.Getrlimit(syscall.RLIMIT_NOFILE, &l) != nil {
		return 0
	}
	return l.Cur
}
