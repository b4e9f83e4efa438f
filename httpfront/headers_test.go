package httpfront

import (
	"net/http"
	"net/textproto"
	"testing"

	"github.com/mcpgate/mcpgate/internal/mcpheader"
)

// header reads the map by the key as given: it is Header.Get only for a
// key in canonical form, as every key it is given must be.
func TestHeaderKeysAreCanonical(t *testing.T) {
	for _, key := range []string{headerSession, headerProtocol, headerAccept, headerOrigin, headerAuthorization, mcpheader.Method, mcpheader.Name} {
		if c := textproto.CanonicalMIMEHeaderKey(key); c != key {
			t.Errorf("header key %q is not in canonical form (%q)", key, c)
		}
		h := http.Header{}
		h.Set(key, "v")
		if got := header(h, key); got != "v" || got != h.Get(key) {
			t.Errorf("header(%q) = %q, Header.Get says %q", key, got, h.Get(key))
		}
	}
	if got := header(http.Header{}, headerAccept); got != "" {
		t.Errorf("header of a missing key = %q", got)
	}
}
