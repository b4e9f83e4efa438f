package httpfront

import "strings"

// BearerValid reports whether an Authorization header carries one of
// tokens, compared in constant time. The scheme is case-insensitive (RFC
// 9110, section 11.1): "bearer" is "Bearer". What guards MCP over HTTP
// guards mcpgate's admin endpoints too.
func BearerValid(tokens []string, header string) bool {
	scheme, token, ok := strings.Cut(header, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return false
	}
	return tokenIndex(tokens, strings.TrimLeft(token, " ")) >= 0
}
