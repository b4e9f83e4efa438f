package secrets

import (
	"encoding/base64"
	"encoding/json"
)

const (
	// jwtMaxSegment bounds each part; a JWT longer than 16 KiB is not sent
	// in a header and is not looked for.
	jwtMaxSegment = 16 << 10
	// jwtMaxHeader bounds the header decoded per candidate.
	jwtMaxHeader = 2 << 10
)

// matchJWT finds a signed JWT (RFC 7519, JWS compact form): three base64url
// parts joined by dots, whose header decodes to a JSON object with an "alg"
// and whose payload decodes to a JSON object. The signature may be empty
// only when the header says "alg": "none". Base64 text that merely starts
// with eyJ (any JSON object encoded) is not a JWT.
func matchJWT(_ *scanState, text string, at int) (int, int, bool) {
	headerEnd := scanBase64URL(text, at)
	if text[headerEnd-1:headerEnd] == "=" || headerEnd-at < 16 || headerEnd-at > jwtMaxHeader || headerEnd >= len(text) || text[headerEnd] != '.' {
		return 0, 0, false
	}
	payloadStart := headerEnd + 1
	payloadEnd := scanBase64URL(text, payloadStart)
	if payloadEnd-payloadStart < 8 || payloadEnd >= len(text) || text[payloadEnd] != '.' {
		return 0, 0, false
	}
	sigStart := payloadEnd + 1
	sigEnd := scanBase64URL(text, sigStart)
	if sigEnd < len(text) && (isAlnum(text[sigEnd]) || text[sigEnd] == '.') {
		return 0, 0, false // four or more parts: not a JWS
	}
	alg, ok := jwtAlg(text[at:headerEnd])
	if !ok || !jsonObjectPrefix(text[payloadStart:payloadEnd]) {
		return 0, 0, false
	}
	if sigEnd-sigStart < 16 && !(sigEnd == sigStart && alg == "none") {
		return 0, 0, false
	}
	return at, sigEnd, true
}

// scanBase64URL returns where the run of base64url characters from i ends,
// at most jwtMaxSegment later.
func scanBase64URL(text string, i int) int {
	limit := min(len(text), i+jwtMaxSegment)
	for i < limit && (isAlnum(text[i]) || text[i] == '-' || text[i] == '_') {
		i++
	}
	return i
}

func jwtAlg(header string) (string, bool) {
	raw, err := base64.RawURLEncoding.DecodeString(header)
	if err != nil {
		return "", false
	}
	var h map[string]json.RawMessage
	if json.Unmarshal(raw, &h) != nil {
		return "", false
	}
	var alg string
	if json.Unmarshal(h["alg"], &alg) != nil || alg == "" {
		return "", false
	}
	return alg, true
}

// jsonObjectPrefix reports whether a base64url payload starts with "{".
func jsonObjectPrefix(payload string) bool {
	var first [3]byte
	n, err := base64.RawURLEncoding.Decode(first[:], []byte(payload[:4]))
	return err == nil && n > 0 && first[0] == '{'
}
