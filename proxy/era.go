package proxy

import (
	"encoding/json"
	"errors"
	"slices"

	"github.com/mcpgate/mcpgate/internal/rawjson"
	"github.com/mcpgate/mcpgate/jsonrpc"
)

// MCP has two eras. The legacy one (2024-11-05 … 2025-11-25) opens a
// session with initialize; the modern one (2026-07-28 on) has no
// handshake: every request carries the protocol version, the client's
// capabilities and identity in its _meta (the envelope), and is served on
// its own. mcpgate serves both on one connection: a request with the
// envelope is served statelessly, whatever came before it; initialize
// opens a legacy session. Which era an upstream speaks is found when it is
// connected (see probe.go).

// versionModern is the one modern revision mcpgate speaks.
const versionModern = "2026-07-28"

// modernVersions are the versions a request's envelope may name.
var modernVersions = []string{versionModern}

// The _meta keys of the modern era.
const (
	metaProtocolVersion = "io.modelcontextprotocol/protocolVersion"
	metaClientCaps      = "io.modelcontextprotocol/clientCapabilities"
	metaClientInfo      = "io.modelcontextprotocol/clientInfo"
	metaLogLevel        = "io.modelcontextprotocol/logLevel"
	metaServerInfo      = "io.modelcontextprotocol/serverInfo"
	metaSubscriptionID  = "io.modelcontextprotocol/subscriptionId"
)

// The error codes the modern era defines.
var (
	// errHeaderMismatch: an HTTP header disagrees with the body.
	errHeaderMismatch = &jsonrpc.Error{Code: -32020, Message: "header mismatch"}
	// errMissingCapability: serving the request needs a client capability
	// the request did not declare.
	errMissingCapability = &jsonrpc.Error{Code: -32021, Message: "missing required client capability"}
	// errUnsupportedVersion: the envelope names a version mcpgate does not
	// serve statelessly.
	errUnsupportedVersion = &jsonrpc.Error{Code: -32022, Message: "unsupported protocol version"}
)

// envelope is what a modern request says of its client. A request without
// one (nil) is a legacy request: its session says these things.
type envelope struct {
	version  string
	caps     map[string]json.RawMessage
	client   implementation
	logLevel string // "" when the request asks for no log messages
	// metaIsEnvelope: the request's _meta holds the envelope's keys and
	// nothing else (no progress token, no key of the client's own), as
	// usual: a legacy server gets the params without _meta at all.
	metaIsEnvelope bool
}

// metaKeyPrefix is the bytes every modern envelope holds, unless its key
// is written with an escape: a request with neither is legacy, found
// without parsing it (see mayHoldEnvelope).
var metaKeyPrefix = []byte(`"io.modelcontextprotocol/protocolVersion"`)

// mayHoldEnvelope reports whether params may hold the envelope: its key as
// written plainly, or any escape, with which the key is the same key
// (PHP's json_encode writes "io.modelcontextprotocol\/protocolVersion";
// "\u0069o…" is it too), and only a parse can tell.
func mayHoldEnvelope(params []byte) bool {
	return rawjson.MayHoldKey(params, metaKeyPrefix)
}

// readEnvelope reads a request's envelope. A request whose _meta does not
// name a protocol version is legacy: nil, nil. One that names it is
// modern, and must be whole: a version mcpgate serves, and the client's
// capabilities. The params are read as Decode split them.
func readEnvelope(msg *jsonrpc.Message) (*envelope, error) {
	if !mayHoldEnvelope(msg.Params) {
		return nil, nil
	}
	ms, ok := msg.ParamMembers()
	if !ok {
		var err error
		if ms, err = rawjson.SplitValid(msg.Params); err != nil {
			return nil, nil
		}
	}
	metaRaw, ok := ms.Get("_meta")
	if !ok {
		return nil, nil // the key is in some other member: not an envelope
	}
	var members [8]rawjson.Member // on the stack: what is kept is copied or parsed
	meta, err := rawjson.SplitValidInto(members[:], metaRaw)
	if err != nil {
		if rawjson.MayHoldKey(metaRaw, metaKeyPrefix) {
			// An envelope with a member repeated: which one counts would
			// depend on who reads it (a server reading the last would take
			// capabilities mcpgate never saw), so it is refused, not taken
			// for a legacy _meta and passed on.
			return nil, jsonrpc.Errorf(jsonrpc.ErrInvalidParams, "params._meta: %v", err)
		}
		return nil, nil
	}
	rawVersion, ok := meta.Get(metaProtocolVersion)
	if !ok {
		return nil, nil
	}
	env := &envelope{metaIsEnvelope: keptMembers(meta, envelopeKeys) == 0}
	if !readString(rawVersion, &env.version) {
		return nil, jsonrpc.Errorf(jsonrpc.ErrInvalidParams, "invalid _meta field %q: a protocol version is a string", metaProtocolVersion)
	}
	if !slices.Contains(modernVersions, env.version) {
		return nil, unsupportedVersion(env.version)
	}
	rawCaps, ok := meta.Get(metaClientCaps)
	if !ok || !readCaps(rawCaps, &env.caps) {
		return nil, jsonrpc.Errorf(jsonrpc.ErrInvalidParams, "missing or invalid _meta field %q: every request of protocol %s declares the client's capabilities (an object; {} for none)", metaClientCaps, env.version)
	}
	if raw, ok := meta.Get(metaClientInfo); ok {
		readImplementation(raw, &env.client) // self-reported and optional: recorded, never relied on
	}
	if raw, ok := meta.Get(metaLogLevel); ok {
		if !readString(raw, &env.logLevel) || logRank(env.logLevel) < 0 {
			return nil, jsonrpc.Errorf(jsonrpc.ErrInvalidParams, "invalid _meta field %q: a log level is one of debug, info, notice, warning, error, critical, alert, emergency", metaLogLevel)
		}
	}
	return env, nil
}

// unsupportedVersion is the error for an envelope naming a version mcpgate
// does not serve statelessly. It lists the versions an envelope may name:
// the legacy ones are reached through initialize, not by retrying.
func unsupportedVersion(requested string) *jsonrpc.Error {
	e := jsonrpc.Errorf(errUnsupportedVersion, "Unsupported protocol version %q: mcpgate serves %v per request, and the legacy versions %v through initialize", requested, modernVersions, supportedVersions)
	e.Data = mustJSON(map[string]any{"supported": modernVersions, "requested": requested})
	return e
}

// declares reports whether the envelope declares capability.
func (e *envelope) declares(capability string) bool {
	_, ok := e.caps[capability]
	return ok
}

// wantsLog reports whether the request asked for log messages of level.
func (e *envelope) wantsLog(level string) bool {
	return e.logLevel != "" && logRank(level) >= logRank(e.logLevel)
}

// completeResult gives a result for a modern request the resultType every
// modern result carries: a legacy upstream's results have none. A result
// that has one (an upstream's input_required) keeps it: a legacy
// upstream's own was made complete as it arrived (see legacyComplete).
// A result that repeats a member is refused, naming the server (rec's):
// mcpgate would read the first resultType and the client, as JSON parsers
// do, the last.
// It is on every modern request's way: the split is on the stack, and the
// result is the one allocation.
func (s *session) completeResult(res json.RawMessage, rec *auditRecord) (json.RawMessage, error) {
	var members [8]rawjson.Member // read here and not kept
	ms, err := rawjson.SplitValidInto(members[:0], res)
	if err != nil {
		return res, s.repeatedMember(err, rec.Server, rec.Method)
	}
	if _, ok := ms.Get("resultType"); ok {
		return res, nil
	}
	const added = `,"resultType":"complete"`
	return ms.AppendReplaced(make([]byte, 0, len(res)+len(added)), res, "resultType", json.RawMessage(`"complete"`)), nil
}

// metaPair is one _meta member to set.
type metaPair struct {
	key   string
	value json.RawMessage
}

// setMeta returns obj (params or a result) with the given members set in
// its _meta, which is added when absent. Everything else is copied byte
// for byte. An obj that is not an object (absent params) becomes one.
func setMeta(obj json.RawMessage, pairs ...metaPair) json.RawMessage {
	ms, err := rawjson.SplitValid(obj)
	if err != nil {
		obj, ms = json.RawMessage("{}"), nil
	}
	meta := json.RawMessage("{}")
	if raw, ok := ms.Get("_meta"); ok {
		meta = raw
	}
	mm, err := rawjson.SplitValid(meta)
	if err != nil {
		meta, mm = json.RawMessage("{}"), nil
	}
	for _, p := range pairs {
		meta = mm.Replace(meta, p.key, p.value)
		mm, _ = rawjson.SplitValid(meta)
	}
	return ms.Replace(obj, "_meta", meta)
}

// CheckModern reads a client's request as a transport must before serving
// it: modern is true when it carries the 2026-07-28 envelope in its _meta.
// A modern request that cannot be served gets err, with the code the spec
// gives (-32602 for an incomplete envelope, -32022 for a version mcpgate
// does not serve, -32601 for a method that is not part of the modern
// protocol): over HTTP these are answered with 400 or 404 before anything
// else happens. A legacy request (no envelope) is neither checked nor
// refused here.
func CheckModern(msg *jsonrpc.Message) (modern bool, err *jsonrpc.Error) {
	env, e := readEnvelope(msg)
	if e != nil {
		return true, jsonrpc.ToWire(e)
	}
	if env == nil {
		return false, nil
	}
	return true, modernMethod(msg.Method)
}

// modernMethod refuses a method that is not part of the modern protocol
// (initialize, ping, logging/setLevel, resources/subscribe … are gone).
func modernMethod(method string) *jsonrpc.Error {
	if m := clientMethods[method]; !m.modern || m.serve == nil {
		return jsonrpc.Errorf(jsonrpc.ErrMethodNotFound, "method not found: %s (not a method of protocol %s)", method, versionModern)
	}
	return nil
}

// ModernVersions are the protocol versions mcpgate serves per request,
// without a session.
func ModernVersions() []string { return slices.Clone(modernVersions) }

// Error codes a modern client must not be sent as they are.
const (
	codeResourceNotFound  = -32002 // legacy; -32602 in the modern era
	codeURLElicitation    = -32042 // 2025-11-25 only
	firstReservedCode     = -32099 // the range the spec keeps for its own codes
	lastReservedCode      = -32020
	codeMissingCapability = -32021
)

// modernError makes an error fit for a modern client. Codes of the legacy
// era are renumbered (resource not found is -32602); codes of the range
// the spec reserves, other than the missing capability the client can act
// on, concern the hop between mcpgate and a server (a header mcpgate sent,
// a version it asked for), not the client: they become internal errors
// that say what the server said.
func modernError(err error) error {
	e, ok := err.(*jsonrpc.Error)
	if !ok {
		var we *jsonrpc.Error
		if !errors.As(err, &we) {
			return err
		}
		e = jsonrpc.ToWire(err)
	}
	switch {
	case e.Code == codeResourceNotFound:
		return &jsonrpc.Error{Code: jsonrpc.ErrInvalidParams.Code, Message: e.Message, Data: e.Data}
	case e.Code == codeURLElicitation || (e.Code >= firstReservedCode && e.Code <= lastReservedCode && e.Code != codeMissingCapability):
		return jsonrpc.Errorf(jsonrpc.ErrInternal, "a server refused mcpgate's request (%d): %s", e.Code, e.Message)
	}
	return err
}
