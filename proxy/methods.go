package proxy

import (
	"context"
	"encoding/json"

	"github.com/mcpgate/mcpgate/jsonrpc"
)

// The gateway's facts about each MCP method live in two tables, one per
// direction: what clients send it (clientMethods) and what upstream
// servers send it (serverMethods). Adding a method is one line in one
// table; the dispatchers below only look things up. (The transports keep
// the few rules the spec gives them: over HTTP, initialize opens a
// session, and a new upstream session repeats the first initialize.)

// clientMethod is one method a client may send the gateway.
type clientMethod struct {
	// serve answers a request. rec is the audit record: serve says which
	// server handled it and under which names.
	serve func(s *session, ctx context.Context, params json.RawMessage, rec *auditRecord) (json.RawMessage, error)
	// notice handles a notification, on the session's reader, in order:
	// it must not block.
	notice func(s *session, params json.RawMessage)
	// beforeInit: allowed before initialize has been answered. Other
	// requests that arrive while initialize runs wait for it.
	beforeInit bool
	// modern: the method is part of the 2026-07-28 protocol too, served to
	// requests that carry its envelope; modernOnly: only there.
	modern, modernOnly bool
}

var clientMethods = map[string]clientMethod{
	methodInitialize: {beforeInit: true, serve: func(s *session, ctx context.Context, p json.RawMessage, _ *auditRecord) (json.RawMessage, error) {
		return s.initialize(ctx, p)
	}},
	methodPing: {beforeInit: true, serve: func(*session, context.Context, json.RawMessage, *auditRecord) (json.RawMessage, error) {
		return json.RawMessage("{}"), nil
	}},
	methodDiscover:      {modern: true, modernOnly: true, serve: (*session).discover},
	methodListen:        {modern: true, modernOnly: true, serve: (*session).listen},
	methodToolsList:     {modern: true, serve: listHandler(kindTools)},
	methodPromptsList:   {modern: true, serve: listHandler(kindPrompts)},
	methodResourcesList: {modern: true, serve: listHandler(kindResources)},
	methodTemplatesList: {modern: true, serve: listHandler(kindTemplates)},
	methodToolsCall:     {modern: true, serve: (*session).callTool},
	methodPromptsGet:    {modern: true, serve: nameHandler(methodPromptsGet, kindPrompts)},
	methodResourcesRead: {modern: true, serve: (*session).readResource},
	methodComplete:      {modern: true, serve: (*session).complete},
	methodSetLevel:      {serve: (*session).setLevel},
	methodSubscribe:     {serve: (*session).subscribe},
	methodUnsubscribe:   {serve: (*session).unsubscribe},

	notifyInitialized:  {notice: (*session).clientReady},
	notifyRootsChanged: {notice: func(s *session, _ json.RawMessage) { s.g.rootsChanged() }},
	notifyCancelled: {notice: func(s *session, p json.RawMessage) {
		if id, ok := cancelledRequest(p); ok {
			s.conn.CancelIncoming(id) // unknown or finished ids are ignored
		}
	}},
}

// serverMethod is one method an upstream server may send the gateway.
type serverMethod struct {
	// serve answers a request to the client side.
	serve func(u *upstream, ctx context.Context, msg *jsonrpc.Message) (json.RawMessage, error)
	// notice handles a notification, on the upstream's reader, in order:
	// it must not block.
	notice func(u *upstream, params json.RawMessage)
	// capability is what the client must have declared for a request to
	// be passed on to it; the server gets an error at once otherwise.
	capability string
}

// serverMethods is filled in init: serving a request looks up its own
// entry (the capability it needs), which a package-level initializer
// cannot refer to.
var serverMethods map[string]serverMethod

func init() { serverMethods = serverMethodTable() }

func serverMethodTable() map[string]serverMethod {
	return map[string]serverMethod{
		methodPing: {serve: func(*upstream, context.Context, *jsonrpc.Message) (json.RawMessage, error) {
			return json.RawMessage("{}"), nil
		}},
		methodSamplingCreate:    {serve: (*upstream).serveClientRequest, capability: "sampling"},
		methodElicitationCreate: {serve: (*upstream).serveClientRequest, capability: "elicitation"},
		methodRootsList:         {serve: (*upstream).serveClientRequest, capability: "roots"},

		notifyCancelled: {notice: func(u *upstream, p json.RawMessage) {
			if id, ok := cancelledRequest(p); ok {
				if w, err := u.connectionNoWait(); err == nil {
					w.conn.CancelIncoming(id)
				}
			}
		}},
		notifyElicitationComplete: {notice: func(u *upstream, p json.RawMessage) { u.g.relayElicitationComplete(u, p) }},
		notifyAcknowledged:        {notice: (*upstream).listenAcknowledged},
		notifyResourceUpdated:     {notice: func(u *upstream, p json.RawMessage) { u.g.relayResourceUpdated(u, p) }},
		notifyToolsChanged:        {notice: func(u *upstream, _ json.RawMessage) { u.listChanged(kindTools) }},
		notifyPromptsChanged:      {notice: func(u *upstream, _ json.RawMessage) { u.listChanged(kindPrompts) }},
		notifyResourcesChanged:    {notice: func(u *upstream, _ json.RawMessage) { u.listChanged(kindResources) }},
		notifyMessage:             {notice: func(u *upstream, p json.RawMessage) { u.g.relayLog(u, p) }},
		notifyProgress:            {notice: func(u *upstream, p json.RawMessage) { u.g.relayProgress(u, p) }},
	}
}

// handle serves what an upstream sends on its own: requests to the client
// side, and notifications.
func (u *upstream) handle(ctx context.Context, msg *jsonrpc.Message) (res json.RawMessage, err error) {
	defer u.g.recoverRequest(msg, &err)
	m, known := serverMethods[msg.Method]
	switch {
	case msg.IsNotification():
		if m.notice != nil {
			m.notice(u, msg.Params)
		}
		return nil, nil
	case !known || m.serve == nil:
		return nil, jsonrpc.Errorf(jsonrpc.ErrMethodNotFound, "mcpgate does not serve %s to upstreams", msg.Method)
	}
	return m.serve(u, ctx, msg)
}

// cancelledRequest reads the request id of notifications/cancelled.
func cancelledRequest(params json.RawMessage) (jsonrpc.ID, bool) {
	var p struct {
		RequestID jsonrpc.ID `json:"requestId"`
	}
	if json.Unmarshal(params, &p) != nil || !p.RequestID.IsValid() {
		return jsonrpc.ID{}, false
	}
	return p.RequestID, true
}
