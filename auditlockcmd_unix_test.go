//go:build unix

package main

import (
	"os"
	"sync"
	"syscall"

	"github.com/rogpeppe/go-internal/testscript"
)

func init() {
	scriptCmds["audit-lock"] = cmdAuditLock
}

// auditLocks are the trail locks audit-lock holds, by lock file.
var auditLocks sync.Map

// cmdAuditLock: audit-lock AUDIT — takes the lock mcpgate takes to write
// the audit trail AUDIT (AUDIT.lock), as another mcpgate writing the same
// file does, and holds it; ! audit-lock AUDIT releases it.
func cmdAuditLock(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 1 {
		ts.Fatalf("usage: [!] audit-lock AUDIT")
	}
	name := ts.MkAbs(args[0]) + ".lock"
	if neg {
		f, ok := auditLocks.LoadAndDelete(name)
		if !ok {
			ts.Fatalf("audit-lock: %s is not held", name)
		}
		ts.Check(f.(*os.File).Close()) // closing the file releases its lock
		return
	}
	f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE, 0o600)
	ts.Check(err)
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		ts.Fatalf("audit-lock: %v", err)
	}
	auditLocks.Store(name, f)
	ts.Defer(func() {
		if f, ok := auditLocks.LoadAndDelete(name); ok {
			f.(*os.File).Close()
		}
	})
}
