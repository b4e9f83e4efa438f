package httpfront

import "net/http"

// header is h.Get(key) for a key already in canonical form, as every
// caller's constant is (TestHeaderKeysAreCanonical): the map is read
// without the key being checked for its canonical form again, several
// times on every request.
func header(h http.Header, canonicalKey string) string {
	if v := h[canonicalKey]; len(v) > 0 {
		return v[0]
	}
	return ""
}

// Header keys read on every request, in canonical form.
const (
	headerAccept        = "Accept"
	headerOrigin        = "Origin"
	headerAuthorization = "Authorization"
)
