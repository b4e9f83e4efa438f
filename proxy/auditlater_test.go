//go:build unix

package proxy

import (
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate/config"
)

// A record appended where waiting is fine (an event, a request served on a
// goroutine) while inline calls' records wait in the queue (see
// auditlater.go) goes after them: the trail keeps the order in which
// things happened. It was appended at once, before records written
// earlier: a call's record after its session's end.
func TestAuditRecordsQueuedKeepTheirPlace(t *testing.T) {
	a, path := auditWithQueuedRecord(t, time.Hour)

	// Then the session ends.
	closed := make(chan struct{})
	go func() {
		defer close(closed)
		a.event("session_closed", "session", "inline")
	}()
	// The writer starts once the event is written or waits its turn
	// behind the record queued.
	for limit := time.Now().Add(20 * time.Second); a.queuedRecords() < 2; runtime.Gosched() {
		if chanClosed(closed) {
			break
		}
		if time.Now().After(limit) {
			t.Fatal("the event was neither written nor queued")
		}
	}
	go a.writeLater()
	select {
	case <-closed:
	case <-time.After(20 * time.Second):
		t.Fatal("an event appended behind a queued record never returned")
	}
	trail := closeAudit(t, a, path)
	call := strings.Index(trail, `"method":"tools/call"`)
	end := strings.Index(trail, `"event":"session_closed"`)
	if call < 0 || end < 0 || end < call {
		t.Fatalf("trail:\n%s\nwant the call's record, then the session's end", trail)
	}
}

// A record whose turn does not come within turnWait (the trail is
// stalled) is taken out of the queue and appended out of turn, once.
func TestAuditRecordOutOfTurnWhenStalled(t *testing.T) {
	a, path := auditWithQueuedRecord(t, 0)
	a.event("session_closed", "session", "inline") // returns: the writer is not running
	if n := a.queuedRecords(); n != 1 {
		t.Fatalf("%d records queued, want the call's only", n)
	}
	go a.writeLater()
	trail := closeAudit(t, a, path)
	if n := strings.Count(trail, `"event":"session_closed"`); n != 1 {
		t.Fatalf("trail:\n%s\nwant the event once, not %d times", trail, n)
	}
	if !strings.Contains(trail, `"method":"tools/call"`) {
		t.Fatalf("trail:\n%s\nwant the call's record too", trail)
	}
}

// auditWithQueuedRecord opens a trail whose writer goroutine is left to
// the test to start (a.writeLater), with an inline call's record queued:
// written while another process held the trail's lock, since released.
func auditWithQueuedRecord(t *testing.T, turnWait time.Duration) (*auditLog, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	a, err := openAudit(config.Audit{Path: path}, slog.New(slog.DiscardHandler), func(s string) string { return s })
	if err != nil {
		t.Fatal(err)
	}
	a.closeLater()
	a.later = &auditLater{turnWait: turnWait, wake: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
	lock, err := os.OpenFile(path+".lock", os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	a.later.places.Add(1) // as reserveLater does
	a.write(&auditRecord{Method: "tools/call", Session: "inline", later: true})
	if a.later.queued.Load() != 1 {
		t.Fatal("the inline call's record was not queued while the trail's lock was held")
	}
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_UN); err != nil {
		t.Fatal(err)
	}
	return a, path
}

// closeAudit closes a's trail, checks that every place reserved was given
// back, and returns the trail.
func closeAudit(t *testing.T, a *auditLog, path string) string {
	t.Helper()
	if err := a.close(); err != nil {
		t.Fatal(err)
	}
	if n := a.later.places.Load(); n != 0 {
		t.Errorf("%d places still reserved once everything was written", n)
	}
	if n := a.later.queued.Load(); n != 0 {
		t.Errorf("%d records counted as queued once everything was written", n)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

func chanClosed(ch chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// queuedRecords is how many records the queue holds.
func (a *auditLog) queuedRecords() int {
	a.later.mu.Lock()
	defer a.later.mu.Unlock()
	return len(a.later.records)
}

// While the trail is stalled, the writer goroutine holds only the record it
// is appending: one that waits its turn behind it stays queued, so that
// its caller can take it back once its turn is late (awaitTurn), rather
// than wait for every record the writer had taken with it (up to 5 s each
// on a stalled trail).
func TestAuditWriterTakesOneRecordAtATime(t *testing.T) {
	a, path := auditWithQueuedRecord(t, time.Hour)
	lock, err := os.OpenFile(path+".lock", os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	evented := make(chan struct{})
	go func() {
		defer close(evented)
		a.event("session_closed", "session", "inline") // waits its turn behind the call's record
	}()
	eventually := func(cond func() bool) {
		for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(time.Millisecond) { // polling for a state another goroutine reaches
			if time.Now().After(deadline) {
				t.Fatal("still not there after 10s")
			}
		}
	}
	eventually(func() bool { return a.queuedRecords() == 2 })
	go a.writeLater()
	records := func() int {
		a.later.mu.Lock()
		defer a.later.mu.Unlock()
		return len(a.later.records)
	}
	eventually(func() bool { return records() < 2 })
	if n := records(); n != 1 {
		t.Errorf("the writer took %d records while the trail was stalled; want the one it appends, the other left queued", 2-n)
	}
	syscall.Flock(int(lock.Fd()), syscall.LOCK_UN)
	lock.Close()
	<-evented
	trail := closeAudit(t, a, path)
	if strings.Count(trail, `"event":"session_closed"`) != 1 || !strings.Contains(trail, `"method":"tools/call"`) {
		t.Fatalf("trail:\n%s\nwant the call's record and the event, once each", trail)
	}
}
