package proxy

import (
	"encoding/json"
	"time"

	"github.com/mcpgate/mcpgate/jsonrpc"
)

// A stateless request (a modern one over HTTP, without a session) was
// served as a whole client session (Serve): a session, its connection,
// its outbox and the stream the transport made for it, and the goroutines
// that read it and wait for its end; a third of the allocations of such
// a tools/call, and a goroutine more than a legacy call. What the request
// needs of a session is little: its envelope (the client's capabilities
// and log level), its client's name, a name for the audit trail, and a way
// for its answer back. A tools/call that goes inline (moderninline.go)
// needs no more, when nothing can be sent to its client before the answer:
// its envelope asks for no log messages (progress tokens and a client that
// may be asked for input are declined by inline already), so its answer is
// all that comes. Such a call is served here, with one allocation for
// all of it and the channel that says its answer came, and no goroutine
// of its own: the POST's goroutine starts it and waits, the server's
// reader answers it. Anything else is served by Serve, as before.

// StatelessCall is a stateless request served without a session (see
// ServeStateless); its answer comes by Wait.
type StatelessCall struct {
	s   session      // the request's, as the inline path takes one: never in g.sessions, no connection
	ctx statelessCtx // the request's context
	msg *jsonrpc.Message
	// answer is the one answer, encoded in pieces (nil when the client
	// left first), set before answered is sent on: a channel of the
	// pieces with room for one was two allocations (a channel's buffer of
	// what holds pointers is one of its own), this is one.
	answer   [][]byte
	answered chan struct{} // room for one
	whole    [1][]byte     // the piece of an answer encoded whole
}

func newStatelessCall(msg *jsonrpc.Message) *StatelessCall {
	return &StatelessCall{msg: msg, answered: make(chan struct{}, 1)}
}

// give sets the answer and says so: once, as the inline call answers once.
func (c *StatelessCall) give(answer [][]byte) {
	c.answer = answer
	c.answered <- struct{}{}
}

// take waits for the answer.
func (c *StatelessCall) take() [][]byte {
	<-c.answered
	return c.answer
}

// ServeStateless starts serving msg, a stateless request (opts.Stateless,
// checked by CheckModernRequest: opts.Checked), without a session, when
// it can: a tools/call that goes inline (see above). nil: nothing was done,
// and the request is served by Serve. The caller must Wait for the
// answer; until then it owns the request's place, as for Serve (the
// request counts among those shutdown waits for).
func (g *Gateway) ServeStateless(msg *jsonrpc.Message, opts ServeOptions) *StatelessCall {
	checked := opts.Checked
	if !opts.Stateless || checked == nil || checked.env == nil || checked.env.logLevel != "" || msg.Method != methodToolsCall {
		return nil
	}
	c := newStatelessCall(msg)
	s := &c.s
	s.g, s.id, s.stateless, s.client, s.checked = g, newStatelessID(), true, opts.Client, checked
	if !s.inlineTo(&c.ctx, msg, c, nil) {
		return nil
	}
	return c
}

// Answer is the inline call's (inlineReply): the request is over, and its
// answer goes to Wait, unless the client left first.
func (c *StatelessCall) Answer(result json.RawMessage, err error, _ *jsonrpc.Cork) {
	c.ctx.end(false) // as a connection's request's context ends when answered
	if c.ctx.clientLeft() {
		c.give(nil)
		return
	}
	m := jsonrpc.Message{ID: c.msg.ID, Result: result}
	if err != nil {
		m = jsonrpc.Message{ID: c.msg.ID, Error: jsonrpc.ToWire(err)}
	} else if len(result) >= bigAnswer {
		// Written in parts, the result's own bytes: encoded whole, a big
		// result was one more copy of it at the peak, as a session's
		// answer is not (jsonrpc.PartsWriter).
		c.give(m.ResultParts())
		return
	}
	c.whole[0] = m.Encode()
	c.give(c.whole[:])
}

// bigAnswer is the size of a result from which its answer goes out in
// parts rather than encoded whole (as inlineMaxSize: a call's result
// past it is not handled on the server's reader either).
const bigAnswer = inlineMaxSize

// OnEndTell is the inline call's (inlineReply): e is told when the
// request's context ends.
func (c *StatelessCall) OnEndTell(e jsonrpc.Ender) bool { return c.ctx.onEnd(e) }

// Wait returns the request's answer, encoded in pieces to be written one
// after the other, once it comes; nil when the
// client left first (gone closed: closing the response stream cancels the
// request, and nothing is sent). stop closes when mcpgate stops: the
// request then has the config's shutdown_grace to finish, and is then
// answered with an error, as a session's request is (see Serve). Every
// request is answered: Wait always returns.
func (c *StatelessCall) Wait(gone, stop <-chan struct{}) [][]byte {
	select {
	case <-c.answered:
		return c.answer
	case <-gone:
		c.ctx.end(true)
		return c.take()
	case <-stop:
	}
	g := c.s.g
	grace := g.live().cfg.ShutdownGrace
	t := time.NewTimer(grace)
	defer t.Stop()
	select {
	case <-c.answered:
		return c.answer
	case <-gone:
		c.ctx.end(true)
		return c.take()
	case <-t.C:
	}
	g.log.Warn("requests still in flight after the shutdown grace period are answered with an error", "session", c.s.id, "grace", grace)
	c.s.graceOver.Store(true)
	c.ctx.end(false)
	return c.take()
}
