package proxy

import (
	"encoding/json"
	"errors"
	"unicode/utf8"

	"github.com/mcpgate/mcpgate/internal/rawjson"
	"github.com/mcpgate/mcpgate/jsonrpc"
)

// repeatedMember is the error for a server's result that could not be split
// because it repeats a member (nil for any other failure, whose result
// passes as before): mcpgate and the client would each read a different
// copy, so the exchange is refused rather than have two meanings.
func (s *session) repeatedMember(err error, server, method string) error {
	var dup *rawjson.DuplicateError
	if !errors.As(err, &dup) {
		return nil
	}
	member := shownMember(dup.Key)
	s.g.log.Warn("upstream sent a result that repeats a member: refused", "server", server, "method", method, "member", member)
	return jsonrpc.Errorf(jsonrpc.ErrInternal, "server %q sent a result with the member %s twice; mcpgate cannot tell which one the client would read: the server is at fault", server, member)
}

// shownMember is a member's name as an error or a log line shows it: the
// server chose it, so a name of megabytes is cut (to 64 bytes, whole
// characters).
func shownMember(name string) string {
	const most = 64
	if len(name) <= most {
		return name
	}
	cut := most
	for cut > 0 && !utf8.RuneStart(name[cut]) {
		cut--
	}
	return name[:cut] + "…"
}

var resultTypeKey = []byte(`"resultType"`)

// legacyComplete is a legacy server's result as a modern client gets it:
// complete, whatever resultType it writes. A server of the legacy era
// cannot take the answers of an input round (the 2026-07-28 protocol's),
// so its "input_required" would have the client ask its user for answers
// the server never reads. mcpgate's own input_required, for a legacy
// server that asks the client (bridgeask.go), is made after this.
// A result without the key, the usual case, is not split.
func legacyComplete(res json.RawMessage) json.RawMessage {
	if !rawjson.MayHoldKey(res, resultTypeKey) {
		return res
	}
	ms, err := rawjson.SplitValid(res)
	if err != nil {
		return res // a repeated member: completeResult refuses it
	}
	if t, ok := ms.Get("resultType"); !ok || string(t) == `"complete"` {
		return res
	}
	return ms.Replace(res, "resultType", []byte(`"complete"`))
}
