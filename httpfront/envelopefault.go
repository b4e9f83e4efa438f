package httpfront

import (
	"encoding/json"

	"github.com/mcpgate/mcpgate/internal/rawjson"
	"github.com/mcpgate/mcpgate/jsonrpc"
)

// envelopeFault names why the envelope of a request its header says is
// modern could not be read, when its params, or its _meta holding the
// envelope's key, repeat a member (which one counts would depend on who
// reads it); the request is refused with it, as over stdio, rather than
// told it has no envelope. nil: neither repeats one.
func envelopeFault(params json.RawMessage) *jsonrpc.Error {
	if len(params) == 0 {
		return nil
	}
	ms, err := rawjson.SplitValid(params)
	if err != nil {
		return jsonrpc.Errorf(jsonrpc.ErrInvalidParams, "params: %v", err)
	}
	meta, ok := ms.Get("_meta")
	if !ok || !rawjson.MayHoldKey(meta, quotedProtocolVersion) {
		return nil
	}
	if _, err := rawjson.SplitValid(meta); err != nil {
		return jsonrpc.Errorf(jsonrpc.ErrInvalidParams, "params._meta: %v", err)
	}
	return nil
}
