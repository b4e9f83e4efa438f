//go:build unix

package main

import (
	"syscall"

	"github.com/rogpeppe/go-internal/testscript"
)

func init() {
	scriptCmds["mkfifo"] = cmdMkfifo
}

// cmdMkfifo: mkfifo PATH — creates a named pipe at PATH: an audit trail
// whose reader (a log shipper) may stall.
func cmdMkfifo(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 1 || neg {
		ts.Fatalf("usage: mkfifo PATH")
	}
	ts.Check(syscall.Mkfifo(ts.MkAbs(args[0]), 0o600))
}
