package proxy

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpgate/mcpgate/jsonrpc"
)

// TestDeleteAuditsTheServersAnswer: a call whose server answered, though
// its client ended the session (DELETE) first, is recorded in the audit
// trail as the server answered it: the client gets the DELETE error, but
// the trail says what the server did, not what the client was told. Both
// ways a call is served: on a handler goroutine, and inline.
func TestDeleteAuditsTheServersAnswer(t *testing.T) {
	for _, listed := range []bool{false, true} {
		t.Run(fmt.Sprint("listed=", listed), func(t *testing.T) {
			auditPath := filepath.Join(t.TempDir(), "audit.jsonl")
			g := startExampleGateway(t, fmt.Sprintf(`"policies": [], "audit": {"path": %q, "include_bodies": true}`, auditPath))
			defer g.Close()
			res, err := callThenDelete(t, g, listed, `{"ask":true}`)
			const deleted = "the client ended the session (DELETE)"
			if err == nil || !strings.Contains(err.Error(), deleted) {
				t.Errorf("the call's answer after DELETE: %s, %v; want the error %q", res, err, deleted)
			}
			rec := auditedCall(t, g, auditPath)
			if rec.Outcome != "ok" || rec.Error != nil || !strings.Contains(string(rec.Result), "client failed") {
				t.Errorf("the audit line of a call its server answered after DELETE: outcome %q, error %s, result %s; want outcome ok and the server's result", rec.Outcome, rec.Error, rec.Result)
			}
		})
	}
}

// TestDeleteCountsTheBytesSent: a call whose server answered after its
// client ended the session (DELETE) counts, in the audit trail's bytes_out
// and so in the metrics, the answer mcpgate sent, the DELETE error: not the
// server's result, which the audit line records but nobody was sent.
func TestDeleteCountsTheBytesSent(t *testing.T) {
	auditPath := filepath.Join(t.TempDir(), "audit.jsonl")
	g := startExampleGateway(t, fmt.Sprintf(`"policies": [], "audit": {"path": %q}`, auditPath))
	defer g.Close()
	_, err := callThenDelete(t, g, false, `{"ask":true}`)
	var sent *jsonrpc.Error
	if !errors.As(err, &sent) {
		t.Fatalf("the call's answer after DELETE: %v; want a JSON-RPC error", err)
	}
	rec := auditedCall(t, g, auditPath)
	if want := len((&jsonrpc.Message{ID: rec.ID, Error: sent}).Encode()); rec.BytesOut != want {
		t.Errorf("the audit line of a call its server answered after DELETE: bytes_out %d; want %d, the size of the DELETE error it was answered with", rec.BytesOut, want)
	}
}

// TestDeleteAuditsAnUnansweredCall: a call its server had not answered
// when its client ended the session (DELETE) is recorded with the DELETE
// error, which the client gets too.
func TestDeleteAuditsAnUnansweredCall(t *testing.T) {
	for _, listed := range []bool{false, true} {
		t.Run(fmt.Sprint("listed=", listed), func(t *testing.T) {
			auditPath := filepath.Join(t.TempDir(), "audit.jsonl")
			g := startExampleGateway(t, fmt.Sprintf(`"policies": [], "audit": {"path": %q}`, auditPath))
			defer g.Close()
			const deleted = "the client ended the session (DELETE) while tools/call was in flight"
			res, err := callThenDeleteUnheld(t, g, listed, `{"ask":true,"hang":true}`)
			if err == nil || !strings.Contains(err.Error(), deleted) {
				t.Errorf("the call's answer after DELETE: %s, %v; want the error %q", res, err, deleted)
			}
			rec := auditedCall(t, g, auditPath)
			if rec.Outcome != "error" || rec.Error == nil || !strings.Contains(string(rec.Error), deleted) {
				t.Errorf("the audit line of a call unanswered at DELETE: outcome %q, error %s; want the error %q", rec.Outcome, rec.Error, deleted)
			}
		})
	}
}

type auditedLine struct {
	Outcome  string
	Error    json.RawMessage
	Result   json.RawMessage
	ID       jsonrpc.ID
	BytesOut int `json:"bytes_out"`
}

// auditedCall closes g, and returns the tools/call line of its trail.
func auditedCall(t *testing.T, g *Gateway, auditPath string) auditedLine {
	t.Helper()
	g.Close() // the audit trail written out
	trail, err := os.ReadFile(auditPath)
	if err != nil {
		t.Fatal(err)
	}
	for line := range bytes.Lines(trail) {
		var rec struct {
			Method string
			auditedLine
		}
		if json.Unmarshal(line, &rec) == nil && rec.Method == methodToolsCall {
			return rec.auditedLine
		}
	}
	t.Fatalf("no tools/call line in the audit trail:\n%s", trail)
	return auditedLine{}
}
