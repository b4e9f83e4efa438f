package httpfront

import (
	"crypto/subtle"
	"strings"
)

// BearerValid reports whether an Authorization header carries one of
// tokens, compared in constant time. The scheme is case-insensitive (RFC
// 9110, section 11.1): "bearer" is "Bearer". What guards MCP over HTTP
// guards mcpgate's admin endpoints too.
func BearerValid(tokens []string, header string) bool {
	scheme, token, ok := strings.Cut(header, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return false
	}
	token = strings.TrimLeft(token, " ")
	valid := 0
	for _, t := range tokens {
		valid |= subtle.ConstantTimeCompare([]byte(token), []byte(t))
	}
	return valid == 1
}
