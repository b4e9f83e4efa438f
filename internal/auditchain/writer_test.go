package auditchain

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

func mustOpen(t *testing.T, path string, opts Options) *Writer {
	t.Helper()
	w, err := Open(path, opts)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

func appendN(t *testing.T, w *Writer, from, n int) {
	t.Helper()
	for i := from; i < from+n; i++ {
		if res := w.Append(fmt.Appendf(nil, `{"n":%d}`, i)); res.Err != nil {
			t.Fatal(res.Err)
		}
	}
}

func mustVerify(t *testing.T, files []string, records int) *Report {
	t.Helper()
	rep, err := Verify(files)
	if err != nil {
		t.Fatalf("Verify: %v", err)
	}
	if rep.Records != records {
		t.Fatalf("%d records verified, want %d; report %+v", rep.Records, records, rep)
	}
	return rep
}

// TestWriterContinuesAFile: a file is continued by the next run, one chain
// with one header, even after a run that was killed mid-write.
func TestWriterContinuesAFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	w := mustOpen(t, path, Options{Sync: SyncNone})
	appendN(t, w, 0, 3)
	w.Close()
	w = mustOpen(t, path, Options{Sync: SyncNone})
	appendN(t, w, 3, 3)
	w.Close()
	mustVerify(t, []string{path}, 7)

	// Killed mid-write: the file ends with a fragment.
	last := strings.TrimSuffix(readLines(t, path)[6], "\n")
	f, _ := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	f.Write(Link(Hash([]byte(last)), []byte(`{"n":99}`))[:50])
	f.Close()
	rep := mustVerify(t, []string{path}, 7)
	if len(rep.Notes) != 1 || !strings.Contains(rep.Notes[0].Msg, "the last line is cut short") {
		t.Errorf("notes = %v, want the cut last line", rep.Notes)
	}
	w = mustOpen(t, path, Options{Sync: SyncNone})
	appendN(t, w, 6, 2)
	w.Close()
	rep = mustVerify(t, []string{path}, 9)
	if len(rep.Notes) != 1 || rep.Notes[0].Line != 8 || !strings.Contains(rep.Notes[0].Msg, "a record cut short") {
		t.Errorf("notes = %v, want line 8 noted as a record cut short", rep.Notes)
	}
}

// TestWriterMovesAsideAForeignFile: a file that is not a chain (an older
// mcpgate's trail) is moved aside, named like a rotated file, and the
// chain starts in a file of its own.
func TestWriterMovesAsideAForeignFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	old := `{"time":"2025-01-01T00:00:00Z","method":"tools/call"}` + "\n"
	os.WriteFile(path, []byte(old), 0o600)
	var log bytes.Buffer
	w := mustOpen(t, path, Options{Sync: SyncNone, Log: slog.New(slog.NewTextHandler(&log, nil))})
	appendN(t, w, 0, 2)
	w.Close()
	files := seriesFiles(t, path)
	if len(files) != 2 {
		t.Fatalf("files = %q, want the old one moved aside and a new one", files)
	}
	if b, _ := os.ReadFile(files[0]); string(b) != old {
		t.Errorf("the old file was changed: %q", b)
	}
	rep := mustVerify(t, files[1:], 3)
	if !rep.Files[0].Genesis {
		t.Errorf("the new chain does not start at Genesis: %+v", rep.Files[0])
	}
	if h, ok := parseHeader([]byte(strings.TrimSuffix(readLines(t, path)[0], "\n"))); !ok || h.PreviousFile != filepath.Base(files[0]) {
		t.Errorf("header = %+v, want previous_file %s", h, filepath.Base(files[0]))
	}
	if !strings.Contains(log.String(), "moved aside") {
		t.Errorf("log = %s, want the move told", log.String())
	}
}

// TestWriterRefusesAForeignFile: a file that is not a trail at all (a
// mistaken audit.path) is neither written into nor moved.
func TestWriterRefusesAForeignFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "notes.txt")
	os.WriteFile(path, []byte("my notes\n"), 0o600)
	if _, err := Open(path, Options{}); err == nil || !strings.Contains(err.Error(), "holds something other than an audit trail") {
		t.Errorf("Open = %v, want a refusal", err)
	}
	if b, _ := os.ReadFile(path); string(b) != "my notes\n" {
		t.Errorf("the file was changed: %q", b)
	}
}

// TestWriterTwoProcesses: writers that share a file (mcpgate once per
// client, one config) take turns, through rotations too: one chain.
func TestWriterTwoProcesses(t *testing.T) {
	if !lockable {
		t.Skip("no flock here")
	}
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	var wg sync.WaitGroup
	for p := range 3 {
		w := mustOpen(t, path, Options{Sync: SyncNone, MaxBytes: 2048})
		wg.Go(func() {
			defer w.Close()
			for i := range 100 {
				if res := w.Append(fmt.Appendf(nil, `{"writer":%d,"n":%d}`, p, i)); res.Err != nil {
					t.Error(res.Err)
					return
				}
			}
		})
	}
	wg.Wait()
	files := seriesFiles(t, path)
	rep, err := Verify(files)
	if err != nil {
		t.Fatalf("Verify: %v", err)
	}
	if rep.Records != 300+len(files) {
		t.Errorf("%d records in %d files; want 300 and a header each", rep.Records, len(files))
	}
}

// TestWriterJoinsAnEmptyFile: processes that open the same empty file
// all find it needs a header; once one of them has written it, the others
// follow its chain rather than start a second header in the same file.
func TestWriterJoinsAnEmptyFile(t *testing.T) {
	if !lockable {
		t.Skip("no flock here")
	}
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	a := mustOpen(t, path, Options{Sync: SyncNone})
	b := mustOpen(t, path, Options{Sync: SyncNone})
	appendN(t, a, 0, 1)
	appendN(t, b, 1, 1)
	appendN(t, a, 2, 1)
	a.Close()
	b.Close()
	rep := mustVerify(t, []string{path}, 4)
	data, _ := os.ReadFile(path)
	if n := strings.Count(string(data), `"event":"audit_file"`); n != 1 {
		t.Errorf("%d headers in one file, want 1; report %+v\n%s", n, rep, data)
	}
}

// TestWriterRotatesByAge: a record that comes max_age after the file's
// header starts a new file, whose header names the old one.
func TestWriterRotatesByAge(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	w := mustOpen(t, path, Options{Sync: SyncNone, MaxAge: time.Hour})
	w.now = func() time.Time { return now }
	appendN(t, w, 0, 2)
	now = now.Add(59 * time.Minute)
	appendN(t, w, 2, 1)
	now = now.Add(time.Minute)
	appendN(t, w, 3, 2)
	w.Close()
	files := seriesFiles(t, path)
	want := RotatedName(path, now)
	if len(files) != 2 || files[0] != want {
		t.Fatalf("files = %q, want %s and %s", files, want, path)
	}
	rep := mustVerify(t, files, 7)
	if rep.Files[0].Records != 4 || rep.Files[1].Records != 3 {
		t.Errorf("files = %+v, want 3 records and a header, then 2 and a header", rep.Files)
	}

	// The age of a file continued by the next run is its header's.
	w = mustOpen(t, path, Options{Sync: SyncNone, MaxAge: time.Hour})
	w.now = func() time.Time { return now.Add(time.Hour) }
	appendN(t, w, 5, 1)
	w.Close()
	mustVerify(t, seriesFiles(t, path), 9)
	if n := len(seriesFiles(t, path)); n != 3 {
		t.Errorf("%d files, want 3", n)
	}
}

// TestWriterBigRecord: a record larger than max_bytes still gets written,
// alone in a file after its header.
func TestWriterBigRecord(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	w := mustOpen(t, path, Options{Sync: SyncNone, MaxBytes: 1024})
	big := fmt.Appendf(nil, `{"big":%q}`, strings.Repeat("x", 3000))
	for range 2 {
		if res := w.Append(big); res.Err != nil {
			t.Fatal(res.Err)
		}
	}
	w.Close()
	files := seriesFiles(t, path)
	rep := mustVerify(t, files, 4)
	if len(rep.Files) != 2 {
		t.Errorf("files = %+v, want one per big record", rep.Files)
	}
}

// TestWriterBatchFlush: with SyncBatch, Append does not wait for the disk,
// and the file is flushed at most every BatchInterval.
func TestWriterBatchFlush(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	synctest.Test(t, func(t *testing.T) {
		w := mustOpen(t, path, Options{})
		defer w.Close()
		appendN(t, w, 0, 1) // the header and a record
		synctest.Wait()
		if got := w.synced.Load(); got != 2 {
			t.Fatalf("after the first record: %d lines flushed, want 2", got)
		}
		appendN(t, w, 1, 3)
		synctest.Wait()
		if got := w.synced.Load(); got != 2 {
			t.Fatalf("%d lines flushed within %v of the last flush, want none since", got, BatchInterval)
		}
		time.Sleep(BatchInterval)
		synctest.Wait()
		if got := w.synced.Load(); got != 5 {
			t.Fatalf("after %v: %d lines flushed, want 5", BatchInterval, got)
		}
	})
}

// TestWriterSyncAlways: Append returns once the record is flushed, and
// appends at once share flushes.
func TestWriterSyncAlways(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	w := mustOpen(t, path, Options{Sync: SyncAlways})
	defer w.Close()
	appendN(t, w, 0, 1)
	if w.synced.Load() != 2 {
		t.Fatalf("Append returned with %d of 2 lines flushed", w.synced.Load())
	}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() { appendN(t, w, g*10, 10) })
	}
	wg.Wait()
	if w.synced.Load() != 82 {
		t.Errorf("%d of 82 lines flushed", w.synced.Load())
	}
}

// TestWriterDevice: a path that is not a regular file (a device, a pipe)
// gets a chain, and no lock file, rotation or flush.
func TestWriterDevice(t *testing.T) {
	w := mustOpen(t, os.DevNull, Options{MaxBytes: 1024, Sync: SyncAlways})
	appendN(t, w, 0, 50)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(os.DevNull + ".lock"); err == nil {
		t.Errorf("%s.lock was created", os.DevNull)
	}
}

// TestWriterRecords: what the lines look like.
func TestWriterRecords(t *testing.T) {
	var out bytes.Buffer
	w := NewStream(&out, Options{Host: "box"})
	w.now = func() time.Time { return time.Date(2026, 11, 26, 1, 2, 3, 4, time.UTC) }
	w.Append([]byte(`{"a":1}`))
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	want0 := fmt.Sprintf(`{"prev":"%s","time":"2026-11-26T01:02:03.000000004Z","event":"audit_file","host":"box","pid":%d}`, Genesis, os.Getpid())
	want1 := fmt.Sprintf(`{"prev":"%s","a":1}`, Hash([]byte(want0)))
	if len(lines) != 2 || lines[0] != want0 || lines[1] != want1 {
		t.Errorf("lines:\n%s\nwant:\n%s\n%s", out.String(), want0, want1)
	}
	for _, l := range lines {
		if !json.Valid([]byte(l)) {
			t.Errorf("not JSON: %s", l)
		}
	}
}

// TestWriterAfterACutHeader: a file whose header was cut short (the disk
// filled, or mcpgate was killed, as it began) gets its header next time.
func TestWriterAfterACutHeader(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	os.WriteFile(path, Link(Genesis, Header{Host: "h"}.record())[:30], 0o600)
	w := mustOpen(t, path, Options{Sync: SyncNone})
	appendN(t, w, 0, 2)
	w.Close()
	rep := mustVerify(t, []string{path}, 3)
	if len(rep.Notes) != 1 || rep.Notes[0].Line != 1 || !rep.Files[0].Genesis {
		t.Errorf("report = %+v; want the cut header noted, and the chain from Genesis", rep)
	}
}
