package proxy

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// TestDeleteKeepsADenialADenial: a call in flight when its client ends the
// session (DELETE) gets the DELETE error, but one whose result a policy
// blocked is recorded as denied all the same, in the audit trail and the
// metrics: nobody reads the answer, and the policy's verdict is what the
// trail is for.
func TestDeleteKeepsADenialADenial(t *testing.T) {
	auditPath := filepath.Join(t.TempDir(), "audit.jsonl")
	g := startExampleGateway(t, fmt.Sprintf(`"policies": [{"policy": "injection", "action": "block"}], "audit": {"path": %q}`, auditPath))
	defer g.Close()
	callThenDelete(t, g, false, `{"ask":true,"inject":true}`)
	g.Close() // the audit trail written out
	trail, err := os.ReadFile(auditPath)
	if err != nil {
		t.Fatal(err)
	}
	for line := range bytes.Lines(trail) {
		var rec struct{ Method, Outcome string }
		if json.Unmarshal(line, &rec) == nil && rec.Method == methodToolsCall {
			if rec.Outcome != "denied" {
				t.Errorf("the blocked call's audit line after DELETE: %s; want outcome denied", bytes.TrimSpace(line))
			}
			return
		}
	}
	t.Fatalf("no tools/call line in the audit trail:\n%s", trail)
}
