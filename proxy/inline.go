package proxy

import (
	"bytes"
	"context"
	"encoding/json"
	"sync/atomic"
	"time"

	"github.com/mcpgate/mcpgate/config"
	"github.com/mcpgate/mcpgate/jsonrpc"
	"github.com/mcpgate/mcpgate/policy"
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
// Only what cannot block or take long goes this way: a legacy client's
// tools/call without _meta (no envelope, no progress token), in a session
// initialized, to a legacy stdio server that is connected (not an
// isolated instance), whose name is listed already (resolving it may fetch
// lists), with a place free among max_concurrent, no policy acting on the
// request or the result (an exec policy waits for a program), audit.sync
// other than "always" (it waits for the disk), and room in the server's
// pipe. Anything else is declined before anything was sent, and served as
// usual. After the request went out, an error (the server's, a timeout, a
// cancellation, a closed connection), a result of inlineMaxResult or more,
// or policies or an audit.sync changed meanwhile, finish on a goroutine
// (slowly: the error path may wait for a process's exit status). Both
// halves run the code the usual path runs (callFailed, toolCallAnswered,
// conclude), in the same order.

// inlineMaxResult bounds a result finished on the server's reader: a
// reader never scans megabytes (the tool-error check, the names
// remembered, the audit body).
const inlineMaxResult = 64 << 10

// inlineCall is one tools/call served without handoffs.
type inlineCall struct {
	s     *session
	msg   *jsonrpc.Message
	reply *jsonrpc.Reply
	rc    requestContext
	rec   auditRecord
	start time.Time
	on    func()      // ic.event, made once: both hooks' (see event)
	over  atomic.Bool // the second half has begun

	rt      route
	name    string // as the client wrote it
	w       *wire
	dl      *deadline
	release func()
	caller  *caller
	call    *jsonrpc.Call
}

// inline is the session's jsonrpc.Options.Inline: it takes a plain
// tools/call (see above) and declines everything else.
func (s *session) inline(ctx context.Context, msg *jsonrpc.Message, reply *jsonrpc.Reply) bool {
	if msg.Method != methodToolsCall || len(msg.Params) == 0 || bytes.Contains(msg.Params, []byte(`"_meta"`)) ||
		s.stateless || s.closing.Load() || !s.readyForCalls() || s.g.live().cfg.Audit.Sync == config.SyncAlways {
		return false
	}
	ic := &inlineCall{s: s, msg: msg, reply: reply, start: time.Now()}
	s.servingIn(&ic.rc, ctx, msg)
	if !ic.begin() {
		ic.rc.hold.release()
		return false
	}
	ic.on = ic.event
	if !reply.OnEnd(ic.on) {
		ic.call.Abandon(ic.rc.Err()) // ended already (the connection is closing)
	}
	if !ic.call.Then(ic.on) {
		ic.event()
	}
	return true
}

// event is told that the call is done (its answer, an error, its
// deadline) or that the request's context ended: the client cancelled it,
// the connection ends, mcpgate stops, or it was answered. A context that
// ends first gives the call up, as Wait does; the second half then runs
// (once) as the call is done.
func (ic *inlineCall) event() {
	select {
	case <-ic.call.Done():
		if ic.over.CompareAndSwap(false, true) {
			ic.answered()
		}
	default:
		ic.call.Abandon(ic.rc.Err()) // done now: the call's hook runs event again
	}
}

// readyForCalls reports, without waiting, whether initialize has been
// answered and none runs (awaitInitialize would let a request through at
// once).
func (s *session) readyForCalls() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.initialized && s.initializing == nil
}

// begin is the call's first half, up to the request sent: false, with
// nothing sent and nothing held, when it cannot go through without
// waiting.
func (ic *inlineCall) begin() (ok bool) {
	s, ctx := ic.s, context.Context(&ic.rc)
	ms, name, err := requestStringParam(ctx, ic.msg.Params, "name")
	if err != nil {
		return false
	}
	rt, listed := s.g.resolveListed(kindTools, name)
	if !listed || rt.up.isolatedBase() || rt.up.base != rt.up {
		return false
	}
	up := rt.up
	if sp := up.base.policies.Load(); sp != nil && (sp.chain.Acts(policy.Request) || sp.chain.Acts(policy.Result)) {
		return false
	}
	w, err := up.connectionNoWait()
	if err != nil || w.ended() || w.isModern() {
		return false
	}
	if _, stdio := w.link.(*process); !stdio {
		return false
	}
	ic.rec = s.record(ic.msg)
	rec := &ic.rec
	params := ic.msg.Params
	if rt.name != name {
		params = ms.Replace(params, "name", quote(rt.name))
	}
	if params, err = s.checkRequest(ctx, rt, kindTools, methodToolsCall, name, params, rec); err != nil {
		return false // a denial: served as usual, which records it
	}
	release, free := up.base.limit.tryAcquire()
	if !free {
		return false
	}
	rec.routed(rt, name)
	rec.Params = params
	dl := up.newDeadline()
	tctx := dl.watch(ctx)
	c := up.addCaller(ic.rc.req, dl)
	call, err := w.conn.GoNoWait(tctx, methodToolsCall, params)
	if err != nil {
		c.done()
		release()
		dl.end()
		return false
	}
	c.sent(call.ID())
	dl.sent(call)
	ic.rt, ic.name, ic.w, ic.dl, ic.release, ic.caller, ic.call = rt, name, w, dl, release, c, call
	return true
}

// answered runs once the call is done, on the goroutine that completed
// it: the second half runs there when it cannot wait or take long, else on
// a goroutine of its own.
func (ic *inlineCall) answered() {
	res, err := ic.call.Wait(context.Background()) // done: returns at once
	sp := ic.rt.up.base.policies.Load()
	if err != nil || len(res) >= inlineMaxResult || sp != nil && sp.chain.Acts(policy.Result) || ic.s.g.live().cfg.Audit.Sync == config.SyncAlways {
		go ic.finish(res, err)
		return
	}
	ic.finish(res, err)
}

// finish is the call's second half: what callWatched, forward, callTool
// and Handle do once the answer is in.
func (ic *inlineCall) finish(res json.RawMessage, err error) {
	res, err = ic.served(res, err)
	res, err = ic.s.conclude(ic.msg, &ic.rec, ic.start, res, err)
	ic.reply.Answer(res, err)
}

// served is the answer to the request, as dispatch returns it.
func (ic *inlineCall) served(res json.RawMessage, err error) (_ json.RawMessage, ferr error) {
	s, ctx := ic.s, context.Context(&ic.rc)
	defer s.g.recoverRequest(ic.msg, &ferr)
	defer ic.rc.hold.release()
	if err != nil {
		err = ic.rt.up.callFailed(ctx, ic.w, ic.call, ic.dl, methodToolsCall, err)
	}
	ic.caller.done()
	ic.release()
	ic.dl.end()
	return s.toolCallAnswered(ctx, ic.rt, ic.name, res, err, &ic.rec)
}

// tryAcquire takes a place if one is free now, never waiting.
func (l *limiter) tryAcquire() (func(), bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.max > 0 && l.inFlight >= l.max {
		return nil, false
	}
	l.inFlight++
	return l.giveBack, true
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
// stdio client's only (a stream that can write without waiting, see
// jsonrpc.TryWriter). An HTTP client's answers are routed by request, and
// its requests come on goroutines of their own already.
func (s *session) inlineFor(stream jsonrpc.Stream) func(context.Context, *jsonrpc.Message, *jsonrpc.Reply) bool {
	if _, ok := stream.(jsonrpc.TryWriter); !ok {
		return nil
	}
	return s.inline
}
