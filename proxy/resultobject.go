package proxy

import (
	"bytes"
	"encoding/json"

	"github.com/mcpgate/mcpgate/jsonrpc"
)

// resultObject checks that a server's answer to method is an object, as
// the schema requires of every result: "result": null, a string or an
// array passed on would be a result the client cannot read, and its
// failure would look like the gateway's. Such an answer fails the request
// with -32603 naming the server, logged once per server.
func (u *upstream) resultObject(method string, res json.RawMessage) (json.RawMessage, error) {
	if isObject(res) {
		return res, nil
	}
	what := resultShape(res)
	if !u.oddResult.Swap(true) {
		u.log.Warn("upstream answered "+method+" with a result that is not an object: such answers fail their requests", "result", what)
	}
	return nil, jsonrpc.Errorf(jsonrpc.ErrInternal, "upstream %q answered %s with a result that is not an object (%s); the MCP schema requires one: the server is at fault", u.name, method, what)
}

// resultShape names what a result that is not an object is, without
// quoting it (it could hold anything).
func resultShape(res json.RawMessage) string {
	res = bytes.TrimSpace(res)
	if len(res) == 0 {
		return "none"
	}
	switch res[0] {
	case 'n':
		return "null"
	case '"':
		return "a string"
	case '[':
		return "an array"
	case 't', 'f':
		return "a boolean"
	default:
		return "a number"
	}
}
