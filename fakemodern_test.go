package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/mcpgate/mcpgate/jsonrpc"
)

// How fakeupstream serves the 2026-07-28 ("modern") era of MCP: no
// initialize, every request carries its own envelope in params._meta,
// every result says its resultType and who answered (spec2026.md §1–§5, §9,
// §10). The spec key "era" chooses:
//
//	legacy  (default) as before: initialize and a session; server/discover is -32601
//	modern  2026-07-28 only: initialize gets -32022 naming the versions served
//	        (as a TypeScript SDK modern-only server answers), a request with no
//	        envelope -32602
//	dual    both: initialize opens a legacy session as before; each request that
//	        carries the envelope is served statelessly, as a modern one
const (
	eraLegacy = "legacy"
	eraModern = "modern"
	eraDual   = "dual"
)

// The _meta keys of the modern era.
const (
	metaProtocolVersion = "io.modelcontextprotocol/protocolVersion"
	metaClientCaps      = "io.modelcontextprotocol/clientCapabilities"
	metaClientInfo      = "io.modelcontextprotocol/clientInfo"
	metaLogLevel        = "io.modelcontextprotocol/logLevel"
	metaServerInfo      = "io.modelcontextprotocol/serverInfo"
	metaSubscriptionID  = "io.modelcontextprotocol/subscriptionId"
)

// The error codes the modern era adds (spec2026.md §3).
var (
	errHeaderMismatch     = &jsonrpc.Error{Code: -32020, Message: "header mismatch"}
	errMissingCapability  = &jsonrpc.Error{Code: -32021, Message: "missing required client capability"}
	errUnsupportedVersion = &jsonrpc.Error{Code: -32022, Message: "unsupported protocol version"}
)

// modernMethods are the requests of the 2026-07-28 core; anything else,
// among them the removed ones, is -32601 (404 on HTTP).
var modernMethods = map[string]bool{
	"server/discover": true, "subscriptions/listen": true, "completion/complete": true,
	"tools/list": true, "tools/call": true, "prompts/list": true, "prompts/get": true,
	"resources/list": true, "resources/templates/list": true, "resources/read": true,
}

var removedMethods = map[string]bool{
	"initialize": true, "ping": true, "logging/setLevel": true,
	"resources/subscribe": true, "resources/unsubscribe": true,
}

// cacheableMethods carry ttlMs and cacheScope on a complete result (§9.1).
var cacheableMethods = map[string]bool{
	"server/discover": true, "tools/list": true, "prompts/list": true,
	"resources/list": true, "resources/templates/list": true, "resources/read": true,
}

// logLevels in order of severity (RFC 5424, as MCP logging uses them).
var logLevels = []string{"debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"}

// fakeCacheHint overrides the caching hints of one method's results.
type fakeCacheHint struct {
	TTLMS      *int   `json:"ttl_ms"`
	CacheScope string `json:"cache_scope"`
}

// check reports what is wrong with a spec's modern keys.
func (s *fakeSpec) check() error {
	var errs []error
	if s.Era != "" && s.Era != eraLegacy && s.Era != eraModern && s.Era != eraDual {
		errs = append(errs, fmt.Errorf("era: %q is not legacy, modern or dual", s.Era))
	}
	scopes := []string{"", "public", "private"}
	if !slices.Contains(scopes, s.CacheScope) {
		errs = append(errs, fmt.Errorf("cache_scope: %q is not public or private", s.CacheScope))
	}
	for m, h := range s.CacheByMethod {
		if !slices.Contains(scopes, h.CacheScope) {
			errs = append(errs, fmt.Errorf("cache_by_method.%s.cache_scope: %q is not public or private", m, h.CacheScope))
		}
	}
	checkRounds := func(where string, rounds []fakeRound) {
		for i, r := range rounds {
			if len(r.Requests) == 0 && r.State == "" {
				errs = append(errs, fmt.Errorf("%s.do.input[%d]: a round needs requests, a state or both", where, i))
			}
		}
	}
	for i, t := range s.Tools {
		checkRounds(fmt.Sprintf("tools[%d]", i), t.Do.Input)
	}
	for i, p := range s.Prompts {
		checkRounds(fmt.Sprintf("prompts[%d]", i), p.Do.Input)
	}
	for i, r := range s.Resources {
		checkRounds(fmt.Sprintf("resources[%d]", i), r.Do.Input)
	}
	return errors.Join(errs...)
}

func (f *fake) era() string {
	if f.spec.Era == "" {
		return eraLegacy
	}
	return f.spec.Era
}

// versions are the modern versions the fake serves.
func (f *fake) versions() []string {
	if len(f.spec.ModernVersions) > 0 {
		return f.spec.ModernVersions
	}
	return []string{modernVersion}
}

// envelope is what a modern request says about its client in params._meta.
type envelope struct {
	version  string
	caps     map[string]json.RawMessage // clientCapabilities
	logLevel string                     // "" when absent: no notifications/message for the request
}

type envelopeKey struct{}

// envelopeFrom returns the envelope of the request being served; nil for a
// legacy request.
func envelopeFrom(ctx context.Context) *envelope {
	env, _ := ctx.Value(envelopeKey{}).(*envelope)
	return env
}

// modernClaim reports whether a request's params carry the modern
// envelope (either of its required keys): such a request is modern, right
// or wrong.
func modernClaim(params json.RawMessage) bool {
	meta := metaOf(params)
	_, v := meta[metaProtocolVersion]
	_, c := meta[metaClientCaps]
	return v || c
}

// metaOf returns params._meta, keys matched exactly (encoding/json would
// match "_META" too).
func metaOf(params json.RawMessage) map[string]json.RawMessage {
	var p, meta map[string]json.RawMessage
	json.Unmarshal(params, &p)
	json.Unmarshal(p["_meta"], &meta)
	return meta
}

// parseEnvelope reads and checks a modern request's envelope: a missing or
// malformed required key is -32602 (§1.3).
func parseEnvelope(method string, params json.RawMessage) (*envelope, error) {
	var p map[string]json.RawMessage
	if json.Unmarshal(params, &p) != nil {
		return nil, jsonrpc.Errorf(jsonrpc.ErrInvalidParams, "%s: params must be an object carrying _meta with %s and %s", method, metaProtocolVersion, metaClientCaps)
	}
	var meta map[string]json.RawMessage
	if json.Unmarshal(p["_meta"], &meta) != nil || meta == nil {
		return nil, jsonrpc.Errorf(jsonrpc.ErrInvalidParams, "%s: params._meta is missing: a %s request carries %s and %s there", method, modernVersion, metaProtocolVersion, metaClientCaps)
	}
	env := &envelope{}
	if json.Unmarshal(meta[metaProtocolVersion], &env.version) != nil || env.version == "" {
		return nil, jsonrpc.Errorf(jsonrpc.ErrInvalidParams, "%s: params._meta[%q] is missing or not a string", method, metaProtocolVersion)
	}
	if json.Unmarshal(meta[metaClientCaps], &env.caps) != nil || env.caps == nil {
		return nil, jsonrpc.Errorf(jsonrpc.ErrInvalidParams, "%s: params._meta[%q] is missing or not an object ({} declares none)", method, metaClientCaps)
	}
	if raw, ok := meta[metaLogLevel]; ok {
		if json.Unmarshal(raw, &env.logLevel) != nil || !slices.Contains(logLevels, env.logLevel) {
			return nil, jsonrpc.Errorf(jsonrpc.ErrInvalidParams, "%s: Invalid log level %s in params._meta[%q]; want one of %s", method, raw, metaLogLevel, strings.Join(logLevels, ", "))
		}
	}
	return env, nil
}

// unsupportedVersion is the -32022 error naming what is served.
func unsupportedVersion(supported []string, requested string) error {
	data := map[string]any{"supported": supported}
	if requested != "" {
		data["requested"] = requested
	}
	return &jsonrpc.Error{Code: errUnsupportedVersion.Code, Data: mustMarshal(data),
		Message: fmt.Sprintf("unsupported protocol version %q: this server speaks %s", requested, strings.Join(supported, ", "))}
}

// checkModern does the checks every modern request gets after its
// envelope: a version served, a method of the modern core.
func (f *fake) checkModern(msg *jsonrpc.Message, env *envelope) error {
	if !slices.Contains(f.versions(), env.version) {
		return unsupportedVersion(f.versions(), env.version)
	}
	if removedMethods[msg.Method] {
		return jsonrpc.Errorf(jsonrpc.ErrMethodNotFound, "method not found: %s was removed in %s", msg.Method, modernVersion)
	}
	if !modernMethods[msg.Method] {
		return jsonrpc.Errorf(jsonrpc.ErrMethodNotFound, "method not found: %s", msg.Method)
	}
	return nil
}

// handleModern serves a request that carries the modern envelope (stdio).
func (f *fake) handleModern(ctx context.Context, msg *jsonrpc.Message) (json.RawMessage, error) {
	env, err := parseEnvelope(msg.Method, msg.Params)
	if err != nil {
		return nil, err
	}
	if err := f.checkModern(msg, env); err != nil {
		return nil, err
	}
	return f.dispatchModern(ctx, msg, env)
}

// refuseLegacy answers a request with no envelope sent to a modern-only
// fake: initialize gets -32022 with the versions served (spec2026.md §5.2),
// anything else -32602 (the envelope is missing).
func (f *fake) refuseLegacy(msg *jsonrpc.Message) error {
	if msg.Method == "initialize" {
		var p struct {
			ProtocolVersion string `json:"protocolVersion"`
		}
		json.Unmarshal(msg.Params, &p)
		return unsupportedVersion(f.versions(), p.ProtocolVersion)
	}
	return jsonrpc.Errorf(jsonrpc.ErrInvalidParams, "%s: params._meta is missing: this server speaks only %s, where every request carries %s and %s",
		msg.Method, strings.Join(f.versions(), ", "), metaProtocolVersion, metaClientCaps)
}

// dispatchModern serves a checked modern request, on stdio or HTTP.
func (f *fake) dispatchModern(ctx context.Context, msg *jsonrpc.Message, env *envelope) (json.RawMessage, error) {
	ctx = context.WithValue(ctx, envelopeKey{}, env)
	var res json.RawMessage
	var err error
	switch msg.Method {
	case "server/discover":
		res = f.discover()
	case "subscriptions/listen":
		res, err = f.listen(ctx, msg)
	default:
		res, err = f.serve(ctx, msg)
	}
	if err != nil {
		return nil, err
	}
	return f.decorate(msg.Method, res), nil
}

// discover answers server/discover; decorate adds resultType, _meta and
// the caching hints.
func (f *fake) discover() json.RawMessage {
	res := map[string]any{"supportedVersions": f.versions(), "capabilities": f.capabilities()}
	if f.spec.Instructions != "" {
		res["instructions"] = f.spec.Instructions
	}
	return mustMarshal(res)
}

// decorate adds what every modern result carries and the fields a result
// given in the spec left out: resultType, _meta serverInfo and, on a
// complete result of a cacheable method, ttlMs and cacheScope.
func (f *fake) decorate(method string, res json.RawMessage) json.RawMessage {
	var m map[string]json.RawMessage
	if f.spec.BareResults || json.Unmarshal(res, &m) != nil || m == nil {
		return res
	}
	if _, ok := m["resultType"]; !ok {
		m["resultType"] = json.RawMessage(`"complete"`)
	}
	var meta map[string]json.RawMessage
	json.Unmarshal(m["_meta"], &meta)
	if meta == nil {
		meta = map[string]json.RawMessage{}
	}
	if _, ok := meta[metaServerInfo]; !ok {
		meta[metaServerInfo] = mustMarshal(map[string]string{"name": f.spec.Name, "version": "1.0.0"})
	}
	m["_meta"] = mustMarshal(meta)
	if cacheableMethods[method] && string(m["resultType"]) == `"complete"` {
		ttl, scope := f.cacheHint(method)
		if _, ok := m["ttlMs"]; !ok {
			m["ttlMs"] = mustMarshal(ttl)
		}
		if _, ok := m["cacheScope"]; !ok {
			m["cacheScope"] = mustMarshal(scope)
		}
	}
	return mustMarshal(m)
}

// cacheHint is the ttlMs and cacheScope of a method's results.
func (f *fake) cacheHint(method string) (int, string) {
	ttl, scope := f.spec.TTLMS, f.spec.CacheScope
	if h, ok := f.spec.CacheByMethod[method]; ok {
		if h.TTLMS != nil {
			ttl = *h.TTLMS
		}
		if h.CacheScope != "" {
			scope = h.CacheScope
		}
	}
	if scope == "" {
		scope = "private" // the TypeScript SDK's default, and the safer one
	}
	return ttl, scope
}

// capabilities are the spec's, or derived from what the fake lists. A
// modern or dual fake announces list changes of everything it lists and
// resource subscriptions, so that subscriptions/listen honours them.
func (f *fake) capabilities() json.RawMessage {
	if f.spec.Capabilities != nil {
		return f.spec.Capabilities
	}
	modern := f.era() != eraLegacy
	f.mu.Lock()
	tools := len(f.spec.Tools)
	f.mu.Unlock()
	c := map[string]any{"logging": map[string]any{}}
	if tools > 0 {
		c["tools"] = map[string]any{"listChanged": true}
	}
	if len(f.spec.Prompts) > 0 {
		c["prompts"] = map[string]any{}
		if modern {
			c["prompts"] = map[string]any{"listChanged": true}
		}
	}
	if len(f.spec.Resources) > 0 || len(f.spec.Templates) > 0 {
		c["resources"] = map[string]any{}
		if modern {
			c["resources"] = map[string]any{"listChanged": true, "subscribe": true}
		}
	}
	return mustMarshal(c)
}

// wantsLog reports whether a notifications/message of level may go out
// for the request: always for a legacy one; for a modern one only when it
// asked for logs at that level or below (spec2026.md §1.1, logLevel).
func wantsLog(env *envelope, level string) bool {
	if env == nil {
		return true
	}
	if env.logLevel == "" {
		return false
	}
	return slices.Index(logLevels, level) >= slices.Index(logLevels, env.logLevel)
}

// sender is how notifications for the request being served go out: on
// HTTP, the request's own answer stream; on stdio, stdout.
type senderKey struct{}

type noteSender func(method string, params json.RawMessage)

func withSender(ctx context.Context, s noteSender) context.Context {
	return context.WithValue(ctx, senderKey{}, s)
}

func (f *fake) sender(ctx context.Context) noteSender {
	if s, ok := ctx.Value(senderKey{}).(noteSender); ok {
		return s
	}
	return func(method string, params json.RawMessage) {
		if f.conn != nil {
			f.conn.Notify(ctx, method, params)
		}
	}
}
