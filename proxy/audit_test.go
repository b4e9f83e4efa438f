package proxy

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/mcpgate/mcpgate/internal/auditchain"
	"github.com/mcpgate/mcpgate/jsonrpc"
)

// diskWriter is a file on a disk that fills up: each write may be cut
// after some bytes, or fail outright, as the test says.
type diskWriter struct {
	buf   bytes.Buffer
	limit []int // per write: how many bytes get through; -1: all
}

func (d *diskWriter) Write(p []byte) (int, error) {
	n := -1
	if len(d.limit) > 0 {
		n, d.limit = d.limit[0], d.limit[1:]
	}
	if n < 0 || n >= len(p) {
		return d.buf.Write(p)
	}
	d.buf.Write(p[:n])
	return n, syscall.ENOSPC
}

// TestAuditWriteFailure: records cut short by a full disk never spoil the
// records after them (nor the chain), each episode of failures is logged
// once, and its end once, in the log and in the trail.
func TestAuditWriteFailure(t *testing.T) {
	disk := &diskWriter{limit: []int{
		-1, // the header
		-1, // ok
		10, // cut mid-record: the episode begins
		0,  // nothing written; the file still ends mid-line
		1,  // only the newline that ends the fragment
		-1, // ok: the episode ends
		-1, // … and the trail says how many records it lost
		25, // cut again: a second episode
		-1, // ok, after a newline
		-1, // the records lost
	}}
	var logged bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logged, nil))
	a := &auditLog{w: auditchain.NewStream(disk, auditchain.Options{}), log: log, redact: func(s string) string { return s }}
	for i := range 7 {
		a.write(&auditRecord{Session: "s", Method: "tools/call", ID: json.RawMessage(strings.Repeat("1", i+1)), Outcome: "ok"})
		if want := i == 1 || i == 2 || i == 3 || i == 5; a.isFailing() != want {
			t.Errorf("after write %d: isFailing = %v, want %v", i, a.isFailing(), want)
		}
	}

	// Every line is a whole record, or a fragment on a line of its own.
	lines := strings.Split(strings.TrimSuffix(disk.buf.String(), "\n"), "\n")
	var ids, events []string
	fragments := 0
	for _, line := range lines {
		var r struct {
			auditRecord
			Event   string `json:"event"`
			Records int    `json:"records"`
		}
		if json.Unmarshal([]byte(line), &r) != nil {
			fragments++
			continue
		}
		if r.Event != "" {
			events = append(events, fmt.Sprintf("%s %d", r.Event, r.Records))
			continue
		}
		ids = append(ids, string(r.ID))
	}
	if got, want := strings.Join(ids, " "), "1 11111 1111111"; got != want {
		t.Errorf("whole records have ids %q, want %q; file:\n%s", got, want, disk.buf.String())
	}
	if got, want := strings.Join(events, ", "), "audit_file 0, audit_records_lost 3, audit_records_lost 1"; got != want {
		t.Errorf("events %q, want %q", got, want)
	}
	if fragments != 2 {
		t.Errorf("%d fragments, want 2 (one per cut record); file:\n%s", fragments, disk.buf.String())
	}
	if !strings.HasSuffix(disk.buf.String(), "\n") {
		t.Errorf("the file does not end with a whole line:\n%s", disk.buf.String())
	}
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	os.WriteFile(path, disk.buf.Bytes(), 0o600)
	if rep, err := auditchain.Verify([]string{path}); err != nil || rep.Records != 6 || len(rep.Notes) != 2 {
		t.Errorf("Verify = %+v, %v; want 6 records and the 2 fragments noted", rep, err)
	}

	if got := a.failureCount(); got != 4 {
		t.Errorf("failureCount = %d, want 4", got)
	}
	logs := logged.String()
	if n := strings.Count(logs, "audit trail write failed"); n != 2 {
		t.Errorf("failure logged %d times, want 2 (once per episode):\n%s", n, logs)
	}
	if n := strings.Count(logs, "audit trail writes succeed again"); n != 2 {
		t.Errorf("recovery logged %d times, want 2:\n%s", n, logs)
	}
	if !strings.Contains(logs, "lost_records=3") || !strings.Contains(logs, "lost_records=1") {
		t.Errorf("recoveries do not say how many records were lost:\n%s", logs)
	}
	if err := a.close(); err == nil || !strings.Contains(err.Error(), "4 records could not be written") {
		t.Errorf("close() = %v, want an error counting the lost records", err)
	}
}

// responseSize is the size of the response on the wire, computed without
// encoding the result again.
func TestResponseSize(t *testing.T) {
	for _, tc := range []struct {
		id     jsonrpc.ID
		result string
		err    *jsonrpc.Error
	}{
		{jsonrpc.IntID(7), `{"content":[]}`, nil},
		{jsonrpc.StringID("a\"b"), `{}`, nil},
		{jsonrpc.IntID(1), ``, nil},
		{jsonrpc.IntID(2), ``, jsonrpc.Errorf(jsonrpc.ErrInvalidParams, "bad <name> \"x\"")},
	} {
		want := len((&jsonrpc.Message{ID: tc.id, Result: []byte(tc.result), Error: tc.err}).Encode())
		if got := responseSize(tc.id, []byte(tc.result), tc.err); got != want {
			t.Errorf("responseSize(%s, %s, %v) = %d, want %d", tc.id, tc.result, tc.err, got, want)
		}
	}
}

// TestAuditEvent: an event record holds its fields in order, encoded as
// JSON, with every string redacted like any record.
func TestAuditEvent(t *testing.T) {
	var out bytes.Buffer
	a := &auditLog{w: auditchain.NewStream(&out, auditchain.Options{}), log: slog.New(slog.DiscardHandler), redact: redactTok}
	a.event("upstream_disconnected", "server", "fs", "reason", "GET https://x/tok/en<1>: refused", "restarts", 2, "fields", []string{"description"})
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if len(lines) != 2 {
		t.Fatalf("lines:\n%s\nwant a header and the event", out.String())
	}
	_, rest, _ := strings.Cut(lines[1], `","time":"`)
	_, rest, _ = strings.Cut(rest, `",`)
	if want := `"event":"upstream_disconnected","server":"fs","reason":"GET https://x/${TOKEN}: refused","restarts":2,"fields":["description"]}`; rest != want {
		t.Errorf("event = %s\nwant    …%s", lines[1], want)
	}
	var nilLog *auditLog
	nilLog.event("session_opened", "session", "s") // no audit trail: nothing, no panic
}
