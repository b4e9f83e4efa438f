package proxy

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/mcpgate/mcpgate/internal/rawjson"
	"github.com/mcpgate/mcpgate/jsonrpc"
)

// Requests routed to one upstream by the name or URI they carry, and the
// rewriting of what comes back.

// nameHandler routes a request by its "name" param (tools/call,
// prompts/get), renaming it to the upstream's own name. The URIs the answer
// carries (resource links, embedded resources) are remembered as the
// server's, so that a client reading them unprefixed reaches it.
func nameHandler(method string, k kind) func(*session, context.Context, json.RawMessage, *auditRecord) (json.RawMessage, error) {
	return func(s *session, ctx context.Context, params json.RawMessage, rec *auditRecord) (json.RawMessage, error) {
		rt, name, params, err := s.routeParam(ctx, params, "name", k)
		if err != nil {
			return nil, err
		}
		res, err := s.forwardChecked(ctx, rt, k, method, name, params, rec)
		if err == nil {
			s.g.live().names.remember(rt.up, method, res)
		}
		return res, err
	}
}

var forwardToolCall = nameHandler(methodToolsCall, kindTools)

// callTool is tools/call: routed by name, and the result made readable for
// the client's protocol version; a result with isError is a tool's own
// failure, recorded as such (it is not an error of the request).
func (s *session) callTool(ctx context.Context, params json.RawMessage, rec *auditRecord) (json.RawMessage, error) {
	res, err := forwardToolCall(s, ctx, params, rec)
	return s.toolResult(ctx, res, err, rec)
}

// toolCallAnswered is what follows a tools/call's answer from the server
// rt (res, or err): forwardChecked's and nameHandler's part after forward,
// then toolResult.
func (s *session) toolCallAnswered(ctx context.Context, rt route, name string, res json.RawMessage, err error, rec *auditRecord) (json.RawMessage, error) {
	if err == nil {
		res, err = rt.up.resultObject(methodToolsCall, res)
	}
	if err == nil {
		res, err = s.checkResult(ctx, rt, kindTools, methodToolsCall, name, res, rec)
	}
	if err == nil {
		s.g.live().names.remember(rt.up, methodToolsCall, res)
	}
	return s.toolResult(ctx, res, err, rec)
}

// toolResult is a tools/call's answer as the client gets it.
func (s *session) toolResult(ctx context.Context, res json.RawMessage, err error, rec *auditRecord) (json.RawMessage, error) {
	if err != nil {
		var denied *denial // declared here: errors.As makes it escape, an allocation per call
		if errors.As(err, &denied) {
			// The model is told, in the result, what the policy refused, so
			// that it can adapt; the upstream never saw a request refused on
			// the way in.
			rec.Outcome = "denied"
			return denied.toolResult(), nil
		}
		return nil, err
	}
	rec.ToolError = isToolError(res)
	return downgradeContent(res, s.versionFor(ctx)), nil
}

func isToolError(result json.RawMessage) bool {
	// A small result is searched first: most have no "isError". A big one
	// is split instead, which jumps over its long strings where a search
	// reads every byte (a 50 MiB result: milliseconds).
	if len(result) < 64<<10 && !bytes.Contains(result, []byte(`"isError"`)) {
		return false
	}
	ms, err := rawjson.SplitValid(result)
	if err != nil {
		return false
	}
	v, _ := ms.Get("isError")
	return string(v) == "true"
}

// forwardChecked is forward between the server's policies: on the request
// before it goes, and on the answer before it comes back (see policy.go).
func (s *session) forwardChecked(ctx context.Context, rt route, k kind, method, name string, params json.RawMessage, rec *auditRecord) (json.RawMessage, error) {
	params, err := s.checkRequest(ctx, rt, k, method, name, params, rec)
	if err != nil {
		rec.routed(rt, name)
		return nil, err
	}
	res, err := s.forward(ctx, rt, method, name, params, rec)
	if err == nil {
		res, err = rt.up.resultObject(method, res)
	}
	if err != nil {
		return nil, err
	}
	return s.checkResult(ctx, rt, k, method, name, res, rec)
}

// forward sends a routed request upstream, with the client's progress token
// replaced by a minted one for as long as the request runs.
func (s *session) forward(ctx context.Context, rt route, method, name string, params json.RawMessage, rec *auditRecord) (json.RawMessage, error) {
	rec.routed(rt, name)
	rec.Params = params // as it goes on: named as the server knows it, as the policies left it
	up, err := s.g.serving(ctx, rt.up)
	if err != nil {
		return nil, err
	}
	req, _ := requestFrom(ctx)
	bridged := req.env != nil && !up.isModern() && takesInput(method)
	if state, ok := stateOf(params); ok && bridged {
		return s.resumeExchange(ctx, up, method, name, params, state)
	}
	dl := up.newDeadline()
	sent, progress := s.g.mapProgressToken(s, req.id, up, params, dl)
	if bridged && req.env.mayBeAsked() {
		// A legacy server may ask this modern client for input: the call
		// is an exchange (see bridgeask.go), which holds the progress
		// token for as long as the server's call runs.
		return s.callBridged(ctx, up, method, name, sent, dl, progress)
	}
	defer progress.release()
	res, err := up.callWatched(ctx, method, sent, dl)
	if req.env != nil && !up.isModern() {
		res = legacyComplete(res)
	}
	if req.env == nil && up.isModern() {
		// A modern server asks for input; this legacy client is asked
		// for it the legacy way (see bridgeinput.go).
		var asks bool
		if err == nil {
			asks, err = s.asksInput(up, method, res)
		}
		if asks {
			res, err = s.fulfilInput(ctx, up, method, params, res)
		}
		return s.legacyInputError(method, res, err)
	}
	return res, err
}

// takesInput reports whether a request may be answered input_required
// (a multi-round-trip request).
func takesInput(method string) bool {
	return method == methodToolsCall || method == methodPromptsGet || method == methodResourcesRead
}

// routeParam resolves the name or URI a request carries in params[key] and
// returns the route, the name as the client wrote it, and params with the
// upstream's own name in its place.
func (s *session) routeParam(ctx context.Context, params json.RawMessage, key string, k kind) (route, string, json.RawMessage, error) {
	ms, name, err := requestStringParam(ctx, params, key)
	if err != nil {
		return route{}, "", nil, err
	}
	rt, err := s.g.resolve(ctx, k, name)
	if err != nil {
		return route{}, "", nil, err
	}
	if rt.name != name {
		params = ms.ReplaceString(params, key, rt.name)
	}
	return rt, name, params, nil
}

// stringParam reads a required string member of params.
func stringParam(params json.RawMessage, key string) (rawjson.MemberList, string, error) {
	return requestStringParam(context.Background(), params, key)
}

// requestStringParam is stringParam for params that may be those of the
// request ctx serves, split already (see paramMembers).
func requestStringParam(ctx context.Context, params json.RawMessage, key string) (rawjson.MemberList, string, error) {
	if len(params) == 0 {
		return nil, "", jsonrpc.Errorf(jsonrpc.ErrInvalidParams, "missing params")
	}
	ms, err := paramMembers(ctx, params)
	if err != nil {
		return nil, "", jsonrpc.Errorf(jsonrpc.ErrInvalidParams, "params: %v", err)
	}
	raw, ok := ms.Get(key)
	var v string
	if ok {
		v, err = stringValue(raw) // no reflection: this is on every call's path
	}
	if !ok || err != nil || v == "" {
		return nil, "", jsonrpc.Errorf(jsonrpc.ErrInvalidParams, "params.%s must be a non-empty string", key)
	}
	return ms, v, nil
}

// paramMembers splits params, or, when they are the params of the request
// ctx serves (the usual case), takes the split made when it was decoded.
func paramMembers(ctx context.Context, params json.RawMessage) (rawjson.MemberList, error) {
	if r, _ := requestFrom(ctx); r.msg != nil {
		if ms, ok := r.msg.ParamMembers(); ok && len(params) > 0 && len(params) == len(r.msg.Params) && &params[0] == &r.msg.Params[0] {
			return ms, nil
		}
	}
	return rawjson.Members(params)
}

// readResource routes resources/read by URI, and gives the contents back
// under the URI the client asked for.
func (s *session) readResource(ctx context.Context, params json.RawMessage, rec *auditRecord) (json.RawMessage, error) {
	rt, uri, params, err := s.routeParam(ctx, params, "uri", kindResources)
	if err != nil {
		return nil, err
	}
	res, err := s.forwardChecked(ctx, rt, kindResources, methodResourcesRead, uri, params, rec)
	if err == nil {
		s.g.live().names.remember(rt.up, methodResourcesRead, res)
	}
	if rt.name == uri {
		return res, err
	}
	if err != nil {
		return nil, renameErrorURI(err, rt.name, uri)
	}
	return renameContents(res, rt.name, uri), nil
}

// renameErrorURI gives a server's "resource not found" the URI the client
// asked for, in data.uri, where the server put its own.
func renameErrorURI(err error, from, to string) error {
	var e *jsonrpc.Error
	if !errors.As(err, &e) || !bytes.Contains(e.Data, []byte(`"uri"`)) {
		return err
	}
	ms, perr := rawjson.SplitValid(e.Data)
	if perr != nil {
		return err
	}
	raw, ok := ms.Get("uri")
	if !ok {
		return err
	}
	if uri, verr := stringValue(raw); verr != nil || uri != from {
		return err
	}
	out := jsonrpc.ToWire(err)
	return &jsonrpc.Error{Code: out.Code, Message: out.Message, Data: ms.Replace(e.Data, "uri", quote(to))}
}

// renameContents rewrites contents[].uri from the upstream's URI to the
// exposed one. Anything it cannot read is passed on unchanged.
func renameContents(res json.RawMessage, from, to string) json.RawMessage {
	ms, err := rawjson.Members(res)
	if err != nil {
		return res
	}
	arr, ok := ms.Get("contents")
	var contents []json.RawMessage
	if !ok || json.Unmarshal(arr, &contents) != nil {
		return res
	}
	changed := false
	for i, c := range contents {
		cm, err := rawjson.Members(c)
		if err != nil {
			continue
		}
		var uri string
		if raw, ok := cm.Get("uri"); ok && json.Unmarshal(raw, &uri) == nil && uri == from {
			contents[i] = cm.Replace(c, "uri", quote(to))
			changed = true
		}
	}
	if !changed {
		return res
	}
	out := []byte{'['}
	for i, c := range contents {
		if i > 0 {
			out = append(out, ',')
		}
		out = append(out, c...)
	}
	return ms.Replace(res, "contents", append(out, ']'))
}

// complete routes completion/complete by its ref: a prompt by name, a
// resource template (or resource) by URI.
func (s *session) complete(ctx context.Context, params json.RawMessage, rec *auditRecord) (json.RawMessage, error) {
	if len(params) == 0 {
		return nil, jsonrpc.Errorf(jsonrpc.ErrInvalidParams, "missing params")
	}
	ms, err := rawjson.Members(params)
	if err != nil {
		return nil, jsonrpc.Errorf(jsonrpc.ErrInvalidParams, "params: %v", err)
	}
	ref, ok := ms.Get("ref")
	if !ok {
		return nil, jsonrpc.Errorf(jsonrpc.ErrInvalidParams, "params.ref is required")
	}
	var r struct {
		Type string `json:"type"`
	}
	json.Unmarshal(ref, &r)
	var k kind
	var key string
	switch r.Type {
	case "ref/prompt":
		k, key = kindPrompts, "name"
	case "ref/resource":
		k, key = kindTemplates, "uri"
	default:
		return nil, jsonrpc.Errorf(jsonrpc.ErrInvalidParams, "params.ref.type must be \"ref/prompt\" or \"ref/resource\", not %q", r.Type)
	}
	rm, name, err := stringParam(ref, key)
	if err != nil {
		return nil, fmt.Errorf("%w (in params.ref)", err)
	}
	rt, err := s.g.resolve(ctx, k, name)
	if err != nil && k == kindTemplates {
		rt, err = s.g.resolve(ctx, kindResources, name)
	}
	if err != nil {
		return nil, err
	}
	if rt.name != name {
		params = ms.Replace(params, "ref", rm.Replace(ref, key, quote(rt.name)))
	}
	return s.forwardChecked(ctx, rt, k, methodComplete, name, params, rec)
}
