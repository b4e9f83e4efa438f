package proxy

import (
	"context"
	"encoding/json"
	"errors"
	"sync/atomic"
	"time"

	"github.com/mcpgate/mcpgate/config"
	"github.com/mcpgate/mcpgate/jsonrpc"
)

// A plain tools/call without handoffs. Served as every request is (Handle),
// a call costs four goroutine wake-ups: the client's reader, the handler
// goroutine it hands the request to, the server's reader, and the handler
// again, woken with the answer; a relay that only copies lines makes two.
// A call that can go through without waiting anywhere skips the two of
// our own: its first half (route, checks, the write to the server) runs on
// the client's reader (session.inline, jsonrpc.Options.Inline), its second
// half (checks, audit record, metrics, the write to the client) on the
// server's reader, when it delivers the answer (jsonrpc.Call.Then).
//
// Only what cannot block or take long goes this way: a stdio client's
// tools/call without _meta (no envelope, no progress token), in a session
// initialized, to a legacy stdio server that is connected (not an
// isolated instance), whose name is listed already (resolving it may fetch
// lists), with a place free among max_concurrent, quick policies only
// (policy.Chain.Quick: no exec program, no file system) and params under
// inlineMaxSize, and an audit record written without waiting (see
// auditNeverWaits and auditlater.go). Anything else is declined, with nothing done that the usual path
// would do again, and served as usual. Past the request's policies (which
// count: a rate limit) the call is committed: a denial is answered at
// once; a server's pipe without room gets the request written by a
// goroutine that waits for it, as Go does. After the request went out, an
// error (the server's, a timeout, a cancellation, a closed connection), a
// result of inlineMaxSize or more, or policies or audit.sync changed
// meanwhile, finish on a goroutine (the error path may wait for a
// process's exit status). Both halves run the code the usual path runs
// (checkRequest, callFailed, toolCallAnswered, conclude), in the same
// order.

// inlineMaxSize bounds the params and the result a reader goroutine
// handles: a reader never scans megabytes (policies, the tool-error check,
// the names remembered, the audit body).
const inlineMaxSize = 64 << 10

// inlineCall is one tools/call served without handoffs.
type inlineCall struct {
	s     *session
	msg   *jsonrpc.Message
	reply inlineReply
	rc    requestContext
	rec   auditRecord
	start time.Time
	over  atomic.Bool // the second half has begun

	rt       route
	name     string // as the client wrote it
	w        *wire
	dl       *deadline // &deadline, once sent
	deadline deadline
	caller   *caller
	call     *jsonrpc.Call // &upCall, unless the request went out on a goroutine
	upCall   jsonrpc.Call  // the request to the server, when sent here (see inlinepool.go)

	// What recycle needs to know that nothing else holds the call (see
	// inlinepool.go).
	sentHere bool        // the request went out on the client's reader, not on a goroutine of its own
	named    bool        // a server request took it as its cause (caller.done's)
	endTold  atomic.Bool // Ended has returned

	// renamed holds the params as the server gets them when the name
	// changes (see appendRenamed); kept across uses (see recycleFrom).
	renamed []byte
	// stripped holds the params as a legacy server gets them from a
	// modern call, its envelope taken out; kept across uses as renamed is.
	stripped []byte
}

// inline is the session's jsonrpc.Options.Inline: it takes a plain
// tools/call (see above) and declines everything else.
func (s *session) inline(ctx context.Context, msg *jsonrpc.Message, reply *jsonrpc.Reply, cork *jsonrpc.Cork) bool {
	return s.inlineTo(ctx, msg, reply, cork)
}

// inlineReply is where an inline call's answer goes: the client's
// connection (*jsonrpc.Reply), or a stateless request's POST (see
// statelesscall.go).
type inlineReply interface {
	Answer(result json.RawMessage, err error, cork *jsonrpc.Cork)
	OnEndTell(e jsonrpc.Ender) bool
}

// inlineTo is inline answering through reply.
func (s *session) inlineTo(ctx context.Context, msg *jsonrpc.Message, reply inlineReply, cork *jsonrpc.Cork) bool {
	if msg.Method != methodToolsCall || len(msg.Params) == 0 || len(msg.Params) >= inlineMaxSize || s.closing.Load() || !s.g.auditNeverWaits() {
		return false
	}
	env, ok := s.inlineEnvelope(msg) // see moderninline.go
	if !ok {
		return false
	}
	ic := newInlineCall()
	ic.s, ic.msg, ic.reply, ic.start = s, msg, reply, time.Now()
	s.servingIn(&ic.rc, ctx, msg)
	ic.rc.req.env = env
	params, ok := ic.prepare()
	if !ok {
		ic.rc.hold.release()
		ic.recycle() // nothing was registered anywhere
		return false
	}
	ic.send(params, cork)
	return true
}

// readyForCalls reports, without waiting, whether initialize has been
// answered and none runs (awaitInitialize would let a request through at
// once).
func (s *session) readyForCalls() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.initialized && s.initializing == nil
}

// prepare checks that the call can go this way, and takes its place among
// max_concurrent: false, with nothing held, when it cannot. params are the
// request's as the server gets them (named as it lists the tool).
func (ic *inlineCall) prepare() (params json.RawMessage, ok bool) {
	s, ctx := ic.s, context.Context(&ic.rc)
	ms, name, err := requestStringParam(ctx, ic.msg.Params, "name")
	if err != nil {
		return nil, false
	}
	if meta, ok := ms.Get("_meta"); ok && !ic.inlineMeta(meta) {
		// A legacy call's (it may carry a progress token to map, or be
		// written with an escape, "\u005fmeta", which inline's search
		// misses), or a modern one's with a progress token.
		return nil, false
	}
	if _, resumes := ms.Get("requestState"); resumes && ic.rc.req.env != nil {
		// A modern call that continues an exchange, its key written with
		// an escape ("request\u0053tate") that inlineEnvelope's search
		// misses: forward resumes it (stateOf reads the key so too).
		return nil, false
	}
	rt, listed := s.g.resolveListed(kindTools, name)
	if !listed || rt.up.isolatedBase() || rt.up.base != rt.up {
		return nil, false
	}
	up := rt.up
	if sp := up.base.policies.Load(); sp != nil && !sp.chain.Quick() {
		return nil, false
	}
	w, err := up.connectionNoWait()
	if err != nil || w.ended() || w.isModern() {
		return nil, false
	}
	if _, stdio := w.link.(*process); !stdio {
		return nil, false
	}
	if !up.base.limit.tryAcquire() {
		return nil, false
	}
	params = ic.msg.Params
	if rt.name != name {
		ic.renamed = appendRenamed(ic.renamed[:0], ms, params, rt.name)
		params = ic.renamed
	}
	ic.rt, ic.name, ic.w = rt, name, w
	return params, true
}

// send runs the request's policies and sends it: from here on the call is
// committed, and answered through finish. cork is the client's reader's.
func (ic *inlineCall) send(params json.RawMessage, cork *jsonrpc.Cork) {
	s, ctx, rt := ic.s, context.Context(&ic.rc), ic.rt
	ic.rec = s.record(ic.msg)
	rec := &ic.rec
	if env := ic.rc.req.env; env != nil {
		rec.Protocol, rec.Client = env.version, env.client.Name
	}
	params, routed, err := ic.checkRequest(ctx, params)
	if err != nil {
		if routed {
			rec.routed(rt, ic.name)
		}
		ic.rt.up.base.limit.release()
		ic.rc.hold.release()
		ic.over.Store(true)
		res, err := s.toolResult(ctx, nil, err, rec) // a denial, told in the result
		if !s.g.reserveLater(rec) {
			go ic.answer(res, err, nil) // its record may wait (see auditlater.go)
			return
		}
		ic.answer(res, err, cork)
		return
	}
	rec.routed(rt, ic.name)
	rec.Params = params
	if ic.rc.req.env != nil {
		params = ic.withoutEnvelope(params) // as outgoing does for a legacy server
	}
	ic.dl = &ic.deadline
	rt.up.initDeadline(ic.dl)
	tctx := ic.dl.watchFrom(ctx, ic.start)
	ic.caller = rt.up.addCaller(ic.rc.req, ic.dl)
	err = ic.w.conn.GoNoWaitInto(tctx, &ic.upCall, cork, methodToolsCall, params)
	if errors.Is(err, jsonrpc.ErrWouldWait) {
		go func() {
			call, err := ic.w.conn.Go(tctx, methodToolsCall, params)
			ic.sent(call, err)
		}()
		return
	}
	ic.sentHere = err == nil
	ic.sent(&ic.upCall, err)
}

// checkRequest runs the request's policies, as forwardChecked does; a
// panic in them is an internal error, as dispatch makes it, and the
// request is then recorded unrouted.
func (ic *inlineCall) checkRequest(ctx context.Context, params json.RawMessage) (_ json.RawMessage, routed bool, err error) {
	defer ic.s.g.recoverRequest(ic.msg, &err)
	params, err = ic.s.checkRequest(ctx, ic.rt, kindTools, methodToolsCall, ic.name, params, &ic.rec)
	return params, true, err
}

// sent is told how the request went out: the answer is waited for
// (event), or, when it could not be sent, the call finishes now.
func (ic *inlineCall) sent(call *jsonrpc.Call, err error) {
	if err != nil {
		ic.over.Store(true)
		go ic.finish(nil, err, nil)
		return
	}
	ic.call = call
	ic.caller.sent(call.ID())
	ic.dl.sent(call)
	if !ic.reply.OnEndTell(ic) {
		ic.call.Abandon(ic.rc.Err()) // ended already (the connection is closing)
	}
	if !ic.call.Then(ic) {
		ic.event(nil)
	}
}

// Ended is told that the request's context ended (see event).
func (ic *inlineCall) Ended() {
	ic.event(nil)
	ic.endTold.Store(true)
}

// Completed is told that the call is done, on the goroutine that did it
// (see jsonrpc.Call.Then): usually the server's reader, with its cork.
func (ic *inlineCall) Completed(cork *jsonrpc.Cork) {
	if ic.event(cork) {
		ic.recycleAnswered()
	}
}

// event is told that the call is done (its answer, an error, its
// deadline) or that the request's context ended: the client cancelled it,
// the connection ends, mcpgate stops, or it was answered. A context that
// ends first gives the call up, as Wait does; the second half then runs
// (once) as the call is done. cork is the calling goroutine's, if it has
// one (see jsonrpc.Cork).
//
// It reports whether it answered the call itself, on this goroutine.
func (ic *inlineCall) event(cork *jsonrpc.Cork) (answeredHere bool) {
	if !ic.call.Over() {
		ic.call.Abandon(ic.rc.Err()) // done now: the call's hook runs event again
		return false
	}
	if ic.over.CompareAndSwap(false, true) {
		return ic.answered(cork)
	}
	return false
}

// answered runs once the call is done, on the goroutine that completed
// it: the second half runs there when it cannot wait or take long, else on
// a goroutine of its own.
func (ic *inlineCall) answered(cork *jsonrpc.Cork) (here bool) {
	res, err := ic.call.Wait(context.Background()) // done: returns at once
	sp := ic.rt.up.base.policies.Load()
	if err != nil || len(res) >= inlineMaxSize || sp != nil && !sp.chain.Quick() || !ic.s.g.auditNeverWaits() || !ic.s.g.reserveLater(&ic.rec) {
		go ic.finish(res, err, nil)
		return false
	}
	ic.finish(res, err, cork)
	return true
}

// finish is the call's second half: what callWatched, forward, callTool
// and Handle do once the answer is in.
func (ic *inlineCall) finish(res json.RawMessage, err error, cork *jsonrpc.Cork) {
	// Off the server's reader, decisions that only record may be left
	// running while the answer goes (see decidelater.go).
	ic.rec.decideLater = cork == nil && ic.s.g.auditNeverWaits()
	res, err = ic.served(res, err)
	ic.answer(res, err, cork)
}

// served is the answer to the request, as dispatch returns it.
func (ic *inlineCall) served(res json.RawMessage, err error) (_ json.RawMessage, ferr error) {
	s, ctx := ic.s, context.Context(&ic.rc)
	defer s.g.recoverRequest(ic.msg, &ferr)
	defer ic.rc.hold.release()
	if err != nil {
		err = ic.rt.up.callFailed(ctx, ic.w, ic.call, ic.dl, methodToolsCall, err)
	}
	ic.named = ic.caller.done()
	ic.rt.up.base.limit.release()
	ic.dl.end()
	if ic.rc.req.env != nil {
		res = legacyComplete(res) // inline serves legacy servers only
	}
	return s.toolCallAnswered(ctx, ic.rt, ic.name, res, err, &ic.rec)
}

// answer records the request and answers it, as Handle does.
func (ic *inlineCall) answer(res json.RawMessage, err error, cork *jsonrpc.Cork) {
	res, err = ic.modernAnswer(res, err)
	res, err = ic.s.conclude(ic.msg, &ic.rec, ic.start, res, err)
	ic.reply.Answer(res, err, cork)
	if ic.rec.rest != nil {
		ic.s.g.recordDecided(&ic.rec)
	}
}

// auditNeverWaits reports whether a request's audit record is written
// without waiting: no trail, or a regular file without audit.sync
// "always" (a pipe's reader may be slow; a sync waits for the disk).
func (g *Gateway) auditNeverWaits() bool {
	return g.audit == nil || g.live().cfg.Audit.Sync != config.SyncAlways && g.audit.w.Regular()
}

// tryAcquire takes a place if one is free now, never waiting; release
// gives it back.
func (l *limiter) tryAcquire() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.max > 0 && l.inFlight >= l.max {
		return false
	}
	l.inFlight++
	return true
}

// resolveListed is resolve for a name the name table knows: it never
// fetches a list. false: resolve it as usual.
func (g *Gateway) resolveListed(k kind, name string) (route, bool) {
	set := g.live()
	rt, _, ok := set.names.lookup(k, name)
	if !ok {
		return route{}, false
	}
	if set.cfg.Namespace {
		// A prefixed name is its server's, whatever another lists.
		if up, _, prefixed := splitPrefixed(name, set.byName); prefixed && rt.up != up {
			return route{}, false
		}
	}
	return rt, true
}

// inlineFor is the session's Options.Inline over the client's stream: a
// stdio client's, or an HTTP client's (see httpinline.go): a stream that
// takes the answer without waiting.
func (s *session) inlineFor(stream jsonrpc.Stream) func(context.Context, *jsonrpc.Message, *jsonrpc.Reply, *jsonrpc.Cork) bool {
	if !inlineStream(stream) {
		return nil
	}
	return s.inline
}
