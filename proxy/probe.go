package proxy

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/mcpgate/mcpgate/config"
	"github.com/mcpgate/mcpgate/internal/rawjson"
	"github.com/mcpgate/mcpgate/jsonrpc"
)

// Which era an upstream speaks is found the way the spec says, once per
// connection: mcpgate asks server/discover with the modern envelope. An
// answer means modern; a recognised modern error (-32022 naming a version
// mcpgate speaks) means modern too; any other error, or silence, means
// legacy, and initialize follows. A server of "protocol": "modern" or
// "legacy" is not asked. What was found is remembered across restarts of
// the server, and asked again if it stops holding.

// probeWait bounds the wait for an answer to the probe: a legacy server
// may ignore a request before initialize.
const probeWait = 10 * time.Second

// errProbeClosed: the server ended the connection when probed (some
// legacy servers exit on any request before initialize). It is legacy,
// and needs a fresh start.
var errProbeClosed = errors.New("the server closed the connection when asked server/discover")

// gatewayCaps are the client capabilities mcpgate declares to a server for
// requests no client caused (fetching lists): all it can pass on, as it
// declares in initialize, so that servers offering some tools only to
// capable clients offer them.
var gatewayCaps = map[string]json.RawMessage{
	"sampling":    json.RawMessage(`{}`),
	"elicitation": json.RawMessage(`{"form":{},"url":{}}`),
	"roots":       json.RawMessage(`{}`),
}

// handshake finds the server's era and opens the connection in it: the
// discover answer, or initialize's, as the connection's initializeResult.
func (u *upstream) handshake(ctx context.Context, w *wire) (initializeResult, error) {
	era := u.cfg.Protocol
	if u.cfg.Type == config.TypeSSE {
		era = config.ProtocolLegacy // the older HTTP+SSE transport is of the legacy era
	}
	if era == config.ProtocolAuto {
		u.base.mu.Lock()
		era = u.base.foundEra
		u.base.mu.Unlock()
	}
	if era != config.ProtocolLegacy {
		res, modern, err := u.discover(ctx, w, era == config.ProtocolModern)
		switch {
		case modern && err == nil:
			u.rememberEra(config.ProtocolModern)
			return res, nil
		case modern || era == config.ProtocolModern:
			if err == nil {
				err = errors.New("it did not answer server/discover")
			}
			return initializeResult{}, err
		case errors.Is(err, errProbeClosed):
			u.rememberEra(config.ProtocolLegacy)
			return initializeResult{}, err
		case errors.Is(err, jsonrpc.ErrClosed):
			return initializeResult{}, err // dial reports why the link ended
		}
	}
	res, err := u.initialize(ctx, w)
	var rpcErr *jsonrpc.Error
	if errors.As(err, &rpcErr) && u.cfg.Protocol == config.ProtocolAuto && offersModern(rpcErr) {
		// A modern-only server refusing initialize: what was remembered
		// (or a probe that timed out on a slow start) was wrong.
		u.rememberEra("")
		if res, modern, err := u.discover(ctx, w, true); modern && err == nil {
			u.rememberEra(config.ProtocolModern)
			return res, nil
		}
	}
	if err == nil && u.cfg.Protocol == config.ProtocolAuto {
		u.rememberEra(config.ProtocolLegacy)
	}
	return res, err
}

// rememberEra keeps what was found for the configured server: its next
// connection, and its instances', start with it.
func (u *upstream) rememberEra(era string) {
	u.base.mu.Lock()
	u.base.foundEra = era
	u.base.mu.Unlock()
}

// discover asks server/discover. modern says whether the server is of the
// modern era; err, when it is, whether it can be spoken to. With sure
// (protocol "modern", or a server already known modern), the full
// init_timeout is given to the answer; a probe gets probeWait.
func (u *upstream) discover(ctx context.Context, w *wire, sure bool) (res initializeResult, modern bool, err error) {
	wait := u.initTimeout()
	if !sure {
		wait = min(wait, probeWait)
	}
	dctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	w.setEra(true) // the probe itself is a modern request
	params := setMeta(nil, envelopePairs(gatewayCaps, "", u.g.version)...)
	raw, err := u.ask(dctx, w, methodDiscover, params)
	var rpcErr *jsonrpc.Error
	if errors.As(err, &rpcErr) && offersModern(rpcErr) {
		// Refused, yet naming the version mcpgate asked for as one it
		// speaks: the spec has the client try again with it, once.
		raw, err = u.ask(dctx, w, methodDiscover, params)
	}
	if err != nil {
		w.setEra(false)
		switch {
		case errors.As(err, &rpcErr) && offersModern(rpcErr):
			return res, true, fmt.Errorf("it speaks protocol 2026-07-28 but refused server/discover: %v", rpcErr.Message)
		case errors.Is(err, jsonrpc.ErrClosed):
			if _, stdio := w.link.(*process); !stdio {
				return res, false, err // the link ended (an HTTP server unreachable): nothing learnt of the era
			}
			return res, false, errProbeClosed
		}
		return res, false, err // silence, or a legacy server's error
	}
	var d struct {
		SupportedVersions []string                   `json:"supportedVersions"`
		Capabilities      map[string]json.RawMessage `json:"capabilities"`
		Instructions      string                     `json:"instructions"`
		ServerInfo        implementation             `json:"serverInfo"` // where drafts put it
		Meta              map[string]json.RawMessage `json:"_meta"`
	}
	if json.Unmarshal(raw, &d) != nil || d.Capabilities == nil || !slices.Contains(d.SupportedVersions, versionModern) {
		w.setEra(false)
		if d.Capabilities != nil && len(d.SupportedVersions) > 0 {
			return res, false, nil // modern versions mcpgate does not speak, or legacy ones: initialize decides
		}
		return res, false, errors.New("its answer to server/discover is not a DiscoverResult")
	}
	if info, ok := d.Meta[metaServerInfo]; ok {
		json.Unmarshal(info, &d.ServerInfo)
	}
	return initializeResult{ProtocolVersion: versionModern, Capabilities: d.Capabilities, ServerInfo: d.ServerInfo, Instructions: d.Instructions}, true, nil
}

// ask sends one request of the handshake and waits for its answer within
// ctx; a request given up on is cancelled, as any other.
func (u *upstream) ask(ctx context.Context, w *wire, method string, params json.RawMessage) (json.RawMessage, error) {
	call, err := w.conn.Go(ctx, method, params)
	if err != nil {
		return nil, err
	}
	res, err := call.Wait(ctx)
	if ctx.Err() != nil {
		u.sendCancel(w, call.ID(), "no answer in time")
	}
	return res, err
}

// offersModern reports whether an error is a modern server's refusal of
// the version asked for that names one mcpgate speaks.
func offersModern(e *jsonrpc.Error) bool {
	if e.Code != errUnsupportedVersion.Code {
		return false
	}
	var data struct {
		Supported []string `json:"supported"`
	}
	json.Unmarshal(e.Data, &data)
	return slices.Contains(data.Supported, versionModern)
}

// initialize runs the legacy handshake.
func (u *upstream) initialize(ctx context.Context, w *wire) (initializeResult, error) {
	params := mustJSON(map[string]any{
		"protocolVersion": latestVersion,
		// Declared to every server, so that servers which offer some tools
		// only to capable clients offer them; a request the actual client
		// cannot serve gets an error (see serveClientRequest).
		"capabilities": map[string]any{
			"sampling":    map[string]any{},
			"elicitation": map[string]any{"form": map[string]any{}, "url": map[string]any{}},
			"roots":       map[string]any{"listChanged": true},
		},
		"clientInfo": map[string]string{"name": "mcpgate", "version": u.g.version},
	})
	ictx, cancel := context.WithTimeout(ctx, u.initTimeout())
	raw, err := w.conn.Call(ictx, methodInitialize, params)
	cancel()
	var res initializeResult
	if err == nil {
		err = json.Unmarshal(raw, &res)
	}
	if err == nil && !SupportsVersion(res.ProtocolVersion) {
		err = fmt.Errorf("it answered protocol version %q, which mcpgate does not speak (it speaks %v)", res.ProtocolVersion, supportedVersions)
	}
	if err == nil {
		nctx, cancel := context.WithTimeout(ctx, u.initTimeout())
		err = w.conn.Notify(nctx, notifyInitialized, nil)
		cancel()
	}
	return res, err
}

// envelopePairs are the _meta members of a modern request from mcpgate:
// the version, the capabilities of the client it asks for, mcpgate as the
// client, and the log level that client wants ("" for none).
func envelopePairs(caps map[string]json.RawMessage, logLevel, version string) []metaPair {
	pairs := []metaPair{
		{metaProtocolVersion, quote(versionModern)},
		{metaClientCaps, mustJSON(caps)},
		{metaClientInfo, mustJSON(implementation{Name: "mcpgate", Version: version})},
	}
	if logLevel != "" {
		pairs = append(pairs, metaPair{metaLogLevel, quote(logLevel)})
	}
	return pairs
}

// envelopeKeys are the members of a modern request's _meta that describe
// its sender: a client's are never passed on, since mcpgate is the
// upstream's client.
var envelopeKeys = []string{metaProtocolVersion, metaClientCaps, metaClientInfo, metaLogLevel}

// outgoing prepares a request's params for the upstream's era: a modern
// server gets mcpgate's envelope for the client behind ctx; a legacy one
// gets none (a client's envelope is taken out: a dual-era server would
// otherwise serve the request as a modern one, inside a legacy session).
//
// A list is fetched once for every client (and cached), so it is asked for
// with mcpgate's own capabilities, whoever asked first.
func (u *upstream) outgoing(ctx context.Context, w *wire, method string, params json.RawMessage) json.RawMessage {
	if !w.isModern() {
		return withoutEnvelope(params)
	}
	caps, level := gatewayCaps, ""
	if r, ok := requestFrom(ctx); ok && !sharedAnswer(method) {
		caps, level = r.clientCaps(), r.logLevel()
	}
	return setMeta(withoutEnvelope(params), envelopePairs(caps, level, u.g.version)...)
}

// withoutEnvelope takes the envelope's members out of params._meta.
func withoutEnvelope(params json.RawMessage) json.RawMessage {
	if !mayHoldEnvelope(params) {
		return params
	}
	return withoutMeta(params, envelopeKeys...)
}

// withoutEnvelopeIn is withoutEnvelope making its result in buf's memory
// when buf has room for it.
func withoutEnvelopeIn(buf []byte, params json.RawMessage) json.RawMessage {
	if !mayHoldEnvelope(params) {
		return params
	}
	return withoutMetaIn(buf, params, envelopeKeys...)
}

// withoutMeta takes keys out of obj._meta. It is on every modern
// request's way to a legacy server: the splits are on the stack, and the
// result is the one allocation.
func withoutMeta(obj json.RawMessage, keys ...string) json.RawMessage {
	return withoutMetaIn(nil, obj, keys...)
}

// withoutMetaIn is withoutMeta making its result in buf's memory when
// buf has room for it (an inline call's, reused: see inlineCall.stripped).
func withoutMetaIn(buf []byte, obj json.RawMessage, keys ...string) json.RawMessage {
	params := obj
	if !bytes.Contains(params, []byte(`"_meta"`)) && !bytes.Contains(params, []byte(`\u`)) {
		return params // no _meta, not even written "\u005fmeta"
	}
	var members, metaMembers [8]rawjson.Member // read here and not kept (more on the stack would grow a new goroutine's)
	ms, err := rawjson.SplitValidInto(members[:0], params)
	if err != nil {
		return params
	}
	meta, ok := ms.Get("_meta")
	if !ok {
		return params
	}
	mm, err := rawjson.SplitValidInto(metaMembers[:0], meta)
	if err != nil {
		return params
	}
	if keptMembers(mm, keys) == 0 { // nothing left: no _meta at all
		return appendObjectWithout(outBuffer(buf, len(params)), ms, []string{"_meta"})
	}
	// ms.Replace(params, "_meta", the kept members), in one buffer.
	for _, m := range ms {
		if m.Key == "_meta" {
			out := append(outBuffer(buf, len(params)), params[:m.Start]...)
			out = appendObjectWithout(out, mm, keys)
			return append(out, params[m.Start+len(m.Value):]...)
		}
	}
	return params // not reached: ms has _meta
}

// outBuffer is buf emptied when it has room for size bytes, else a new
// buffer that has.
func outBuffer(buf []byte, size int) []byte {
	if cap(buf) >= size {
		return buf[:0]
	}
	return make([]byte, 0, size)
}

// keptMembers counts the members of ms that are not among keys.
func keptMembers(ms rawjson.MemberList, keys []string) int {
	n := 0
	for _, m := range ms {
		if !slices.Contains(keys, m.Key) {
			n++
		}
	}
	return n
}

// appendObjectWithout appends the object of members ms without the
// members keys to dst; values are kept byte for byte.
func appendObjectWithout(dst []byte, ms rawjson.MemberList, keys []string) []byte {
	dst = append(dst, '{')
	first := true
	for _, m := range ms {
		if slices.Contains(keys, m.Key) {
			continue
		}
		if !first {
			dst = append(dst, ',')
		}
		first = false
		dst = rawjson.AppendString(dst, m.Key)
		dst = append(dst, ':')
		dst = append(dst, m.Value...)
	}
	return append(dst, '}')
}

// clientCaps are the capabilities of the client behind the request: a
// modern request's own, or its legacy session's.
func (r clientRequest) clientCaps() map[string]json.RawMessage {
	if r.env != nil {
		return r.env.caps
	}
	r.s.mu.Lock()
	defer r.s.mu.Unlock()
	caps := make(map[string]json.RawMessage, len(r.s.clientCaps))
	for k, v := range r.s.clientCaps {
		if k == "roots" {
			v = json.RawMessage(`{}`) // listChanged is gone in the modern era
		}
		caps[k] = v
	}
	return caps
}

// logLevel is the level of log messages the client behind the request
// wants; "" for none.
func (r clientRequest) logLevel() string {
	if r.env != nil {
		return r.env.logLevel
	}
	r.s.mu.Lock()
	defer r.s.mu.Unlock()
	return r.s.logLevel
}

// sharedAnswer reports whether the answer to method serves every client:
// the lists, and mcpgate's own listen.
func sharedAnswer(method string) bool {
	switch method {
	case methodToolsList, methodPromptsList, methodResourcesList, methodTemplatesList, methodListen, methodDiscover:
		return true
	}
	return false
}
