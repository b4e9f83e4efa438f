package proxy

import (
	"bytes"
	"encoding/json"

	"github.com/mcpgate/mcpgate/jsonrpc"
)

// A modern (2026-07-28) tools/call goes inline too (see inline.go), on a
// stdio client's session and on the session the HTTP front makes for a
// request that comes without one: its envelope says all a session would
// (the client's capabilities, its log level), and nothing in it waits
// when the call is plain. Plain is inline's plain, and: the gateway has
// started (no wait for the servers), the envelope carries no progress
// token (it would be mapped), the request continues no exchange
// (requestState) and the client declared nothing a server could ask it
// for (an exchange, see modernplain.go). Past that, the call is served as
// dispatchModern serves it: the audit record names its protocol and
// client, the server gets the params without the envelope, and the answer
// is made fit for a modern client (modernError, completeResult).

// inlineEnvelope is the envelope of a tools/call that inline may take:
// nil for a legacy call (none in its params), and false for a call inline
// declines.
func (s *session) inlineEnvelope(msg *jsonrpc.Message) (*envelope, bool) {
	if !bytes.Contains(msg.Params, []byte(`"_meta"`)) {
		// Legacy (a "\u005fmeta" is found by prepare, and declined).
		return nil, !s.stateless && s.readyForCalls()
	}
	return s.inlineModernEnvelope(msg)
}

// inlineModernEnvelope is inlineEnvelope's part for a call with _meta. A
// panic in reading the envelope declines the call (dispatch reads it again,
// under its own recovery, and answers an internal error): here it would
// take down the client's reader.
func (s *session) inlineModernEnvelope(msg *jsonrpc.Message) (_ *envelope, ok bool) {
	defer func() {
		if recover() != nil {
			ok = false
		}
	}()
	env, err := s.envelopeOf(msg)
	if err != nil || env == nil || env.mayBeAsked() || bytes.Contains(msg.Params, []byte(`"requestState"`)) {
		return nil, false // not modern (a progress token to map), refused, or not plain
	}
	select {
	case <-s.g.warm:
	default:
		return nil, false // awaitStartup would wait
	}
	return env, true
}

// inlineMeta reports whether a call with _meta in its params may go
// inline: only a modern one, whose _meta holds no progress token.
func (ic *inlineCall) inlineMeta(meta []byte) bool {
	return ic.rc.req.env != nil && !bytes.Contains(meta, []byte(`"progressToken"`)) && !bytes.Contains(meta, []byte(`\u`))
}

// withoutEnvelope is withoutEnvelope(params) in the call's own buffer,
// which it keeps for the next use (see inlinepool.go): the server's copy
// of a modern call's params costs no allocation once the pool is warm.
func (ic *inlineCall) withoutEnvelope(params json.RawMessage) json.RawMessage {
	out := withoutEnvelopeOf(ic.stripped, params, ic.msg, ic.rc.req.env)
	if len(out) > 0 && len(params) > 0 && &out[0] != &params[0] {
		ic.stripped = out[:0]
	}
	return out
}

// withoutEnvelopeOf is withoutEnvelopeIn(buf, params) for params that may
// be msg's, whose envelope env is: when its _meta was the envelope alone,
// the params' split (made as msg was decoded) is all it takes, the params
// without their _meta, rather than splitting params and _meta again.
func withoutEnvelopeOf(buf []byte, params json.RawMessage, msg *jsonrpc.Message, env *envelope) json.RawMessage {
	if env != nil && env.metaIsEnvelope && len(params) > 0 && len(params) == len(msg.Params) && &params[0] == &msg.Params[0] {
		if ms, ok := msg.ParamMembers(); ok {
			return appendObjectWithout(outBuffer(buf, len(params)), ms, metaKey)
		}
	}
	return withoutEnvelopeIn(buf, params)
}

// metaKey is the one key appendObjectWithout takes out of a modern
// call's params for a legacy server.
var metaKey = []string{"_meta"}

// modernAnswer is dispatchModern's part after serving, for a modern call.
// A panic in it is an internal error, as dispatch makes it.
func (ic *inlineCall) modernAnswer(res json.RawMessage, err error) (_ json.RawMessage, ferr error) {
	if ic.rc.req.env == nil {
		return res, err
	}
	defer ic.s.g.recoverRequest(ic.msg, &ferr)
	if err != nil {
		return nil, modernError(err)
	}
	return completeResult(res), nil
}
