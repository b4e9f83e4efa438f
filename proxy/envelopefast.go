package proxy

import (
	"bytes"
	"encoding/json"
	"strings"

	"github.com/mcpgate/mcpgate/internal/rawjson"
	"github.com/mcpgate/mcpgate/jsonrpc"
)

// Every modern request's envelope is read twice (the HTTP front checks it
// before serving, the session routes by it), and encoding/json's
// reflection made it a sixth of a stateless call's allocations. Its usual
// shapes (plain strings, a capabilities object, a clientInfo of name,
// title and version) are read here from the split the params already
// have; anything else goes to encoding/json as before, which decides what
// these readers cannot (escapes, keys matched regardless of case, values
// of another type). FuzzReadEnvelope holds the two to the same answers.

// readString is json.Unmarshal of raw into *s: false when raw is not a
// string (null leaves *s as it is, as Unmarshal does).
func readString(raw json.RawMessage, s *string) bool {
	if lit, ok := plainLiteral(raw); ok {
		switch string(lit) { // compiled to comparisons: no allocation for the usual values
		case versionModern:
			*s = versionModern
		default:
			*s = string(lit)
		}
		return true
	}
	return json.Unmarshal(raw, s) == nil
}

// plainLiteral is the text of raw when it is a string literal without
// escapes or bytes beyond ASCII, which stand for themselves.
func plainLiteral(raw []byte) ([]byte, bool) {
	if len(raw) < 2 || raw[0] != '"' || raw[len(raw)-1] != '"' {
		return nil, false
	}
	lit := raw[1 : len(raw)-1]
	for _, c := range lit {
		if c >= 0x80 || c == '\\' || c == '"' || c < 0x20 {
			return nil, false
		}
	}
	return lit, true
}

// readCaps is json.Unmarshal of raw into a new map in *caps, reporting
// whether raw was an object. The values are copied once, together, so
// that none views the message's bytes.
// noCaps is the capabilities of a client that declared none: shared by
// every such envelope, so never written to (nothing writes an envelope's
// caps).
var noCaps = map[string]json.RawMessage{}

func readCaps(raw json.RawMessage, caps *map[string]json.RawMessage) bool {
	var members [8]rawjson.Member // on the stack: the values are copied below
	ms, err := rawjson.SplitValidInto(members[:], raw)
	if err != nil {
		var m map[string]json.RawMessage
		if json.Unmarshal(raw, &m) != nil || m == nil {
			return false
		}
		*caps = m
		return true
	}
	if len(ms) == 0 {
		*caps = noCaps // "clientCapabilities": {}, as most clients send
		return true
	}
	own := bytes.Clone(raw)
	m := make(map[string]json.RawMessage, len(ms))
	for _, member := range ms {
		m[member.Key] = own[member.Start : member.Start+len(member.Value) : member.Start+len(member.Value)]
	}
	*caps = m
	return true
}

// readImplementation is json.Unmarshal of raw into *impl, whose outcome
// readEnvelope ignores: what it fills is what counts.
func readImplementation(raw json.RawMessage, impl *implementation) {
	var members [4]rawjson.Member // on the stack: the values are copied below
	ms, err := rawjson.SplitValidInto(members[:0], raw)
	if err != nil {
		json.Unmarshal(raw, impl)
		return
	}
	var got implementation
	for _, m := range ms {
		var field *string
		switch m.Key {
		case "name":
			field = &got.Name
		case "title":
			field = &got.Title
		case "version":
			field = &got.Version
		default:
			if strings.EqualFold(m.Key, "name") || strings.EqualFold(m.Key, "title") || strings.EqualFold(m.Key, "version") {
				json.Unmarshal(raw, impl) // matched regardless of case, as encoding/json does
				return
			}
			continue
		}
		lit, ok := plainLiteral(m.Value)
		if !ok {
			json.Unmarshal(raw, impl)
			return
		}
		*field = string(lit)
	}
	*impl = got
}

// ModernRequest is a modern request as a transport checked it
// (CheckModernRequest), envelope read. Served with ServeOptions.Checked,
// it is not read again: over HTTP every stateless request was read twice.
type ModernRequest struct {
	params json.RawMessage
	id     jsonrpc.ID
	env    *envelope
}

// CheckModernRequest is CheckModern keeping the envelope it read for the
// session that serves the request (ServeOptions.Checked); nil when the
// request is legacy or refused.
func CheckModernRequest(msg *jsonrpc.Message) (*ModernRequest, *jsonrpc.Error) {
	env, e := readEnvelope(msg)
	if e != nil {
		return nil, jsonrpc.ToWire(e)
	}
	if env == nil {
		return nil, nil
	}
	if err := modernMethod(msg.Method); err != nil {
		return nil, err
	}
	return &ModernRequest{params: msg.Params, id: msg.ID, env: env}, nil
}

// envelopeOf is readEnvelope, but for the request the transport checked
// already: the same params (the very bytes), the same id. A message may
// be copied on its way (jsonrpc keeps requests in structs of its own);
// its params are not.
func (s *session) envelopeOf(msg *jsonrpc.Message) (*envelope, error) {
	if c := s.checked; c != nil && msg.ID == c.id && len(msg.Params) == len(c.params) && len(c.params) > 0 && &msg.Params[0] == &c.params[0] {
		return c.env, nil
	}
	return readEnvelope(msg)
}
