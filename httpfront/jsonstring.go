package httpfront

import (
	"bytes"

	"github.com/mcpgate/mcpgate/internal/rawjson"
	"github.com/mcpgate/mcpgate/jsonrpc"
)

// paramMembers returns the members of msg's params: the split made when
// it was decoded, else a new one; ok is false when params are not an
// object. A modern request's params were split up to three times more.
func paramMembers(msg *jsonrpc.Message) (rawjson.MemberList, bool) {
	if ms, ok := msg.ParamMembers(); ok {
		return ms, true
	}
	ms, err := rawjson.SplitValid(msg.Params)
	return ms, err == nil
}

// jsonString is json.Unmarshal of one valid JSON value, as its exact
// bytes, into a string, without its reflection and its second scan: ok as
// Unmarshal's error is nil (a string, or null, which leaves "").
func jsonString(value []byte) (s string, ok bool) {
	switch {
	case len(value) > 0 && value[0] == '"':
		s, err := rawjson.Unquote(value)
		return s, err == nil
	case string(value) == "null":
		return "", true
	}
	return "", false
}

// sameJSONString reports whether value, one valid JSON value, is the JSON
// string of s, without unquoting it into a string of its own when it has
// no escapes (the usual case). false: it is not, or it has escapes (ask
// jsonString).
func sameJSONString(value []byte, s string) bool {
	n := len(value)
	if n < 2 || value[0] != '"' || bytes.IndexByte(value, '\\') >= 0 {
		return false
	}
	return string(value[1:n-1]) == s
}
