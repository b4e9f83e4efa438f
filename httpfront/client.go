package httpfront

import (
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"strings"
)

// clientOf names the client a request comes from, as far as the front can
// tell them apart: by the bearer token it presented, hashed (the name is
// kept and compared; the token is not). Without tokens every client is
// the same one, "".
//
// A session belongs to the client that opened it: another client's
// requests naming it are answered as if it did not exist. What mcpgate
// hands a client to continue a call with is refused to another
// (proxy.ServeOptions.Client).
func (f *Front) clientOf(r *http.Request) string {
	if len(f.cfg.Tokens) == 0 {
		return ""
	}
	_, token, _ := strings.Cut(r.Header.Get("Authorization"), " ")
	sum := sha256.Sum256([]byte(strings.TrimLeft(token, " ")))
	return "bearer:" + hex.EncodeToString(sum[:])
}
