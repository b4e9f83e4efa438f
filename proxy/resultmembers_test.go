package proxy

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// TestShownMemberIsCut: a repeated member's name, chosen by the server,
// reaches the client's error and the log cut to 64 bytes of whole
// characters; a usual name as it is.
func TestShownMemberIsCut(t *testing.T) {
	if got := shownMember("resultType"); got != "resultType" {
		t.Errorf("shownMember(resultType) = %q", got)
	}
	long := strings.Repeat("é", 1<<20)
	got := shownMember(long)
	if len(got) > 64+len("…") || !utf8.ValidString(got) || !strings.HasSuffix(got, "…") {
		t.Errorf("a name of %d bytes is shown as %d bytes (valid UTF-8 %v): %.80q", len(long), len(got), utf8.ValidString(got), got)
	}
}
