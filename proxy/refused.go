package proxy

import (
	"encoding/json"

	"github.com/mcpgate/mcpgate/jsonrpc"
)

// RecordRefused records a request of session sessionID that its transport
// answered itself with err, before the session saw it, as the session
// records the requests it refuses (see session.refused). The HTTP front
// refuses a request whose id belongs to a request with its POST still
// open (the answer would go to that POST): the same refusal the session
// gives when the first request's POST is gone, and audited alike.
func (g *Gateway) RecordRefused(sessionID string, msg *jsonrpc.Message, err *jsonrpc.Error) {
	g.recordRefused(sessionID, msg, err)
}

func (g *Gateway) recordRefused(sessionID string, msg *jsonrpc.Message, err *jsonrpc.Error) {
	method := msg.Method
	if method == "" {
		method = "(unreadable)"
	}
	rec := &auditRecord{Session: sessionID, Method: method, Server: "mcpgate", ID: json.RawMessage(msg.ID.String()), BytesIn: msg.Size,
		Outcome: "error", Error: &auditError{Code: err.Code, Message: g.redact(err.Message)}, BytesOut: responseSize(msg.ID, nil, err)}
	if !msg.ID.IsValid() {
		rec.ID = json.RawMessage("null")
	}
	g.metrics.observe(rec)
	g.audit.write(rec)
}
