package proxy

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/mcpgate/mcpgate/jsonrpc"
)

// methodInfo is everything the gateway knows about one client method: how
// it is answered, and whether it is allowed before initialize. One table,
// so that adding a method is one line, not a case in several switches.
type methodInfo struct {
	handle     func(s *session, ctx context.Context, params json.RawMessage, rec *auditRecord) (json.RawMessage, error)
	beforeInit bool
}

var methods map[string]methodInfo

func init() {
	methods = map[string]methodInfo{
		methodInitialize: {beforeInit: true, handle: func(s *session, ctx context.Context, p json.RawMessage, _ *auditRecord) (json.RawMessage, error) {
			return s.initialize(ctx, p)
		}},
		methodPing: {beforeInit: true, handle: func(*session, context.Context, json.RawMessage, *auditRecord) (json.RawMessage, error) {
			return json.RawMessage("{}"), nil
		}},
		// Clients of the stateless 2026-07-28 protocol probe with
		// server/discover; -32601 makes them fall back to initialize.
		methodDiscover: {beforeInit: true, handle: func(*session, context.Context, json.RawMessage, *auditRecord) (json.RawMessage, error) {
			return nil, jsonrpc.Errorf(jsonrpc.ErrMethodNotFound, "%s (mcpgate speaks the initialize-based protocol, up to %s)", methodDiscover, LatestVersion)
		}},
		methodToolsList:     {handle: listHandler(kindTools)},
		methodPromptsList:   {handle: listHandler(kindPrompts)},
		methodResourcesList: {handle: listHandler(kindResources)},
		methodTemplatesList: {handle: listHandler(kindTemplates)},
		methodToolsCall:     {handle: nameHandler(methodToolsCall, kindTools)},
		methodPromptsGet:    {handle: nameHandler(methodPromptsGet, kindPrompts)},
		methodResourcesRead: {handle: (*session).readResource},
		methodComplete:      {handle: (*session).complete},
		methodSetLevel:      {handle: (*session).setLevel},
		methodSubscribe:     {handle: (*session).subscribe},
		methodUnsubscribe:   {handle: (*session).unsubscribe},
	}
}

// listHandler serves a merged list: in one page, or in pages of the
// configured size.
func listHandler(k kind) func(*session, context.Context, json.RawMessage, *auditRecord) (json.RawMessage, error) {
	return func(s *session, ctx context.Context, params json.RawMessage, rec *auditRecord) (json.RawMessage, error) {
		var p struct {
			Cursor *string `json:"cursor"`
		}
		if len(params) > 0 {
			json.Unmarshal(params, &p)
		}
		if s.g.cfg.PageSize > 0 && p.Cursor != nil {
			rec.Server = "mcpgate"
			return s.pagedList(nil, k, p.Cursor)
		}
		if p.Cursor != nil {
			return nil, jsonrpc.Errorf(jsonrpc.ErrInvalidParams, "unknown cursor %q: mcpgate returns every %s in one page", *p.Cursor, kindNoun[k])
		}
		results := s.g.fetchAll(ctx, k)
		rec.Server = "*"
		for _, r := range results {
			if r.err == nil && !r.skipped {
				rec.Servers = append(rec.Servers, r.up.name)
			}
		}
		var res json.RawMessage
		if s.g.cfg.PageSize > 0 {
			var err error
			if res, err = s.pagedList(results, k, nil); err != nil {
				return nil, err
			}
		} else {
			res, _, _ = s.g.merge(k, results)
		}
		return s.reportMissing(k, results, res), nil
	}
}

// reportMissing tells the client which servers a list lacks, so that
// nothing is dropped silently: the result's _meta names them with the
// reason, and a warning log message says it in words.
func (s *session) reportMissing(k kind, results []listResult, res json.RawMessage) json.RawMessage {
	type missing struct {
		Server string `json:"server"`
		Reason string `json:"reason"`
	}
	var gone []missing
	for _, r := range results { // every configured server has a result
		if r.err != nil {
			gone = append(gone, missing{r.up.name, s.g.redact(r.err.Error())})
		}
	}
	if len(gone) == 0 {
		return res
	}
	var words []string
	for _, m := range gone {
		words = append(words, m.Server)
		s.g.log.Warn("list incomplete", "method", kinds[k].list, "server", m.Server, "reason", m.Reason)
	}
	if s.wantsLog("warning") {
		s.notify(notifyMessage, mustJSON(map[string]any{
			"level":  "warning",
			"logger": "mcpgate",
			"data":   fmt.Sprintf("%s is missing what these servers offer, because they are unavailable: %s", kinds[k].list, strings.Join(words, ", ")),
		}))
	}
	ms, err := jsonrpc.SplitValid(res)
	if err != nil {
		return res
	}
	return ms.Replace(res, "_meta", mustJSON(map[string]any{metaUnavailable: gone}))
}

// nameHandler routes a request by its "name" param (tools/call,
// prompts/get), renaming it to the upstream's own name.
func nameHandler(method string, k kind) func(*session, context.Context, json.RawMessage, *auditRecord) (json.RawMessage, error) {
	return func(s *session, ctx context.Context, params json.RawMessage, rec *auditRecord) (json.RawMessage, error) {
		rt, name, params, err := s.routeParam(ctx, params, "name", k)
		if err != nil {
			return nil, err
		}
		res, err := s.forward(ctx, rt, method, name, params, rec)
		if err == nil {
			s.g.names.remember(rt.up, method, res)
		}
		if err == nil && method == methodToolsCall {
			res = downgradeContent(res, s.protocolVersion())
		}
		return res, err
	}
}

// forward sends a routed request upstream, with the client's progress token
// replaced by a minted one for as long as the request runs.
func (s *session) forward(ctx context.Context, rt route, method, name string, params json.RawMessage, rec *auditRecord) (json.RawMessage, error) {
	rec.Server, rec.Name, rec.Upstream = rt.up.name, name, rt.name
	up, err := s.g.serving(ctx, rt.up)
	if err != nil {
		return nil, err
	}
	req, _ := requestFrom(ctx)
	params, release, watch := s.g.mapProgressToken(s, req.id, up, params)
	defer release()
	return up.callWatched(ctx, method, params, watch)
}

// routeParam resolves the name or URI a request carries in params[key] and
// returns the route, the name as the client wrote it, and params with the
// upstream's own name in its place.
func (s *session) routeParam(ctx context.Context, params json.RawMessage, key string, k kind) (route, string, json.RawMessage, error) {
	ms, name, err := stringParam(params, key)
	if err != nil {
		return route{}, "", nil, err
	}
	rt, err := s.g.resolve(ctx, k, name)
	if err != nil {
		return route{}, "", nil, err
	}
	if rt.name != name {
		params = ms.Replace(params, key, quote(rt.name))
	}
	return rt, name, params, nil
}

// stringParam reads a required string member of params.
func stringParam(params json.RawMessage, key string) (jsonrpc.MemberList, string, error) {
	if len(params) == 0 {
		return nil, "", jsonrpc.Errorf(jsonrpc.ErrInvalidParams, "missing params")
	}
	ms, err := jsonrpc.Members(params)
	if err != nil {
		return nil, "", jsonrpc.Errorf(jsonrpc.ErrInvalidParams, "params: %v", err)
	}
	raw, ok := ms.Get(key)
	var v string
	if !ok || json.Unmarshal(raw, &v) != nil || v == "" {
		return nil, "", jsonrpc.Errorf(jsonrpc.ErrInvalidParams, "params.%s must be a non-empty string", key)
	}
	return ms, v, nil
}

// readResource routes resources/read by URI, and gives the contents back
// under the URI the client asked for.
func (s *session) readResource(ctx context.Context, params json.RawMessage, rec *auditRecord) (json.RawMessage, error) {
	rt, uri, params, err := s.routeParam(ctx, params, "uri", kindResources)
	if err != nil {
		return nil, err
	}
	res, err := s.forward(ctx, rt, methodResourcesRead, uri, params, rec)
	if err == nil {
		s.g.names.remember(rt.up, methodResourcesRead, res)
	}
	if err != nil || rt.name == uri {
		return res, err
	}
	return renameContents(res, rt.name, uri), nil
}

// renameContents rewrites contents[].uri from the upstream's URI to the
// exposed one. Anything it cannot read is passed on unchanged.
func renameContents(res json.RawMessage, from, to string) json.RawMessage {
	ms, err := jsonrpc.Members(res)
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
		cm, err := jsonrpc.Members(c)
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
	ms, err := jsonrpc.Members(params)
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
	return s.forward(ctx, rt, methodComplete, name, params, rec)
}

// setLevel records the client's log level and passes the most verbose level
// any client wants to every upstream that logs, answering once all replied.
func (s *session) setLevel(ctx context.Context, params json.RawMessage, rec *auditRecord) (json.RawMessage, error) {
	var p struct {
		Level string `json:"level"`
	}
	if json.Unmarshal(params, &p) != nil || logRank(p.Level) < 0 {
		return nil, jsonrpc.Errorf(jsonrpc.ErrInvalidParams, "params.level must be one of %s", strings.Join(logLevels, ", "))
	}
	s.mu.Lock()
	s.logLevel = p.Level
	s.mu.Unlock()
	level := p.Level
	for _, other := range s.g.snapshotSessions() {
		other.mu.Lock()
		if l := other.logLevel; l != "" && logRank(l) < logRank(level) {
			level = l
		}
		other.mu.Unlock()
	}
	out := mustJSON(map[string]string{"level": level})
	var wg sync.WaitGroup
	var mu sync.Mutex
	for _, base := range s.g.upstreams {
		u, ok := s.servingNoStart(base)
		if !ok {
			continue // an isolated server's instance gets the level when it starts
		}
		if _, ok := u.capability("logging"); !ok {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := u.call(ctx, methodSetLevel, out); err != nil && !errors.Is(err, context.Canceled) {
				s.g.log.Warn("logging/setLevel failed upstream", "server", u.name, "err", err)
				return
			}
			mu.Lock()
			rec.Servers = append(rec.Servers, u.name)
			mu.Unlock()
		}()
	}
	wg.Wait()
	rec.Server = "*"
	return json.RawMessage("{}"), nil
}
