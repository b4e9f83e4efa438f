package proxy

import (
	"bytes"
	"encoding/json"

	"github.com/mcpgate/mcpgate/internal/rawjson"
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
	rename := ""
	if sameBytes(params, ic.renamed) {
		rename = ic.rt.name // params are appendRenamed's, from the request's
	}
	out := withoutEnvelopeOf(ic.stripped, params, ic.msg, ic.rc.req.env, rename)
	if len(out) > 0 && len(params) > 0 && &out[0] != &params[0] {
		ic.stripped = out[:0]
	}
	return out
}

// withoutEnvelopeOf is withoutEnvelopeIn(buf, params) for params that are
// msg's, or msg's renamed (appendRenamed with rename, when not ""), whose
// envelope env is: when its _meta was the envelope alone, the split made
// as msg was decoded is all it takes, the params without their _meta (and
// renamed), rather than splitting params and _meta again.
func withoutEnvelopeOf(buf []byte, params json.RawMessage, msg *jsonrpc.Message, env *envelope, rename string) json.RawMessage {
	if env != nil && env.metaIsEnvelope && (rename != "" || sameBytes(params, msg.Params)) {
		if ms, ok := msg.ParamMembers(); ok {
			return appendRenamedWithoutMeta(outBuffer(buf, len(params)), ms, rename)
		}
	}
	return withoutEnvelopeIn(buf, params)
}

// appendRenamedWithoutMeta appends the object of members ms without its
// _meta, the value of its first "name" replaced by rename unless that is
// "" (as appendRenamed does), to dst.
func appendRenamedWithoutMeta(dst []byte, ms rawjson.MemberList, rename string) []byte {
	dst = append(dst, '{')
	first := true
	for _, m := range ms {
		if m.Key == "_meta" {
			continue
		}
		if !first {
			dst = append(dst, ',')
		}
		first = false
		dst = rawjson.AppendString(dst, m.Key)
		dst = append(dst, ':')
		if rename != "" && m.Key == "name" {
			dst = rawjson.AppendString(dst, rename)
			rename = ""
			continue
		}
		dst = append(dst, m.Value...)
	}
	return append(dst, '}')
}

// sameBytes reports whether a and b are the same bytes in memory.
func sameBytes(a, b []byte) bool {
	return len(a) > 0 && len(a) == len(b) && &a[0] == &b[0]
}

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
	return ic.s.completeResult(res, &ic.rec)
}
