package proxy

import (
	"encoding/hex"
	"testing"
)

// A stateless request's session name is unique and shaped as a session
// id: 32 hex digits.
func TestStatelessIDsUnique(t *testing.T) {
	seen := map[string]bool{}
	for range 1000 {
		id := newStatelessID()
		if b, err := hex.DecodeString(id); err != nil || len(b) != 16 {
			t.Fatalf("newStatelessID() = %q, want 32 hex digits", id)
		}
		if seen[id] {
			t.Fatalf("newStatelessID() gave %q twice", id)
		}
		seen[id] = true
	}
}
