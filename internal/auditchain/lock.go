package auditchain

import (
	"errors"
	"fmt"
	"time"
)

// lockWait bounds how long an Append waits for another process that
// writes the same file to finish its own.
const lockWait = 5 * time.Second

// errLockBusy: another process kept the lock for lockWait.
var errLockBusy = errors.New("audit trail busy")

// lock takes the lock other processes writing the file take too. flock
// cannot be given a deadline, and one process stuck (a hung disk) must not
// stall this one for ever: it is tried without blocking, again and again
// for up to lockWait. Another process holds it for one write, so the first
// try or one soon after gets it.
func (w *Writer) lock() error {
	if w.lockFile == nil {
		return nil
	}
	deadline := time.Now().Add(lockWait)
	pause := 20 * time.Microsecond
	for {
		ok, err := tryLock(w.lockFile)
		if err != nil {
			return fmt.Errorf("locking %s: %w", w.lockFile.Name(), err)
		}
		if ok {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%w: another process has held %s for %v: is another mcpgate stuck writing the audit trail?", errLockBusy, w.lockFile.Name(), lockWait)
		}
		time.Sleep(pause)
		pause = min(2*pause, 5*time.Millisecond)
	}
}

func (w *Writer) unlock() {
	if w.lockFile != nil {
		unlock(w.lockFile)
	}
}
