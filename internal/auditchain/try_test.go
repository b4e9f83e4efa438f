package auditchain

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestWriterTryAppend: TryAppend writes only when nothing would make it
// wait (another process holding the lock, a rotation due, SyncAlways,
// another Append under way), and what it writes is part of one chain with
// what Append writes.
func TestWriterTryAppend(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	w := mustOpen(t, path, Options{Sync: SyncNone, MaxBytes: 600})
	if _, done := w.TryAppend([]byte(`{"n":0}`)); !done {
		t.Fatal("TryAppend declined with nothing in its way")
	}

	if lockable {
		other, err := os.OpenFile(path+".lock", os.O_RDWR, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer other.Close()
		if ok, err := tryLock(other); !ok || err != nil {
			t.Fatalf("taking the lock as another process would: %v, %v", ok, err)
		}
		if _, done := w.TryAppend([]byte(`{"n":1}`)); done {
			t.Fatal("TryAppend wrote while another process held the lock")
		}
		unlock(other)
	}

	w.mu.Lock()
	_, done := w.TryAppend([]byte(`{"n":1}`))
	w.mu.Unlock()
	if done {
		t.Fatal("TryAppend went on while another Append was under way")
	}

	appendN(t, w, 1, 3)
	// Just past what is left of the file, but not of a new one.
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	big := []byte(`{"n":4,"pad":"` + strings.Repeat("x", 600-int(fi.Size())) + `"}`)
	if _, done := w.TryAppend(big); done {
		t.Fatal("TryAppend wrote a record due to rotate the file")
	}
	if res := w.Append(big); res.Err != nil {
		t.Fatal(res.Err)
	}
	if _, done := w.TryAppend([]byte(`{"n":5}`)); !done {
		t.Fatal("TryAppend declined after the rotation")
	}
	w.Close()
	mustVerify(t, seriesFiles(t, path), 6+2)

	always := mustOpen(t, filepath.Join(t.TempDir(), "audit.jsonl"), Options{Sync: SyncAlways})
	defer always.Close()
	if _, done := always.TryAppend([]byte(`{"n":0}`)); done {
		t.Fatal("TryAppend wrote with SyncAlways, which waits for the disk")
	}
}
