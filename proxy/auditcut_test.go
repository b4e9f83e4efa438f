package proxy

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// An error message cut for the audit trail is cut at a character's start.
func TestCutMessageKeepsCharacters(t *testing.T) {
	for _, msg := range []string{strings.Repeat("é", 1000), strings.Repeat("x", 1023) + "日本語", strings.Repeat("🙂", 600)} {
		got := cutMessage(msg)
		if !utf8.ValidString(got) || !strings.HasSuffix(got, " bytes in all)") || len(got) > maxAuditErrorMessage+40 {
			t.Errorf("cutMessage of %d bytes: %q", len(msg), got[max(0, len(got)-60):])
		}
	}
}
