package httpfront

import (
	"crypto/sha256"
	"crypto/subtle"
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
	_, token, _ := strings.Cut(header(r.Header, headerAuthorization), " ")
	token = strings.TrimLeft(token, " ")
	if i := tokenIndex(f.cfg.Tokens, token); i >= 0 {
		return f.tokenClients()[i] // the usual case: the guard let only such tokens in
	}
	return clientName(token)
}

// clientName is the name of the client presenting token.
func clientName(token string) string {
	sum := sha256.Sum256([]byte(token))
	return "bearer:" + hex.EncodeToString(sum[:])
}

// tokenClients are the names of the clients of the configured tokens, in
// their order: made once, not hashed again for every request.
func (f *Front) tokenClients() []string {
	f.clientsOnce.Do(func() {
		f.clients = make([]string, len(f.cfg.Tokens))
		for i, t := range f.cfg.Tokens {
			f.clients[i] = clientName(t)
		}
	})
	return f.clients
}

// tokenIndex is the index of token among tokens, -1 when it is none of
// them: every token compared, each in constant time, as BearerValid does.
func tokenIndex(tokens []string, token string) int {
	found := -1
	for i, t := range tokens {
		found = subtle.ConstantTimeSelect(subtle.ConstantTimeCompare([]byte(token), []byte(t)), i, found)
	}
	return found
}
