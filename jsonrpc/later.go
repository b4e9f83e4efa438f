package jsonrpc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
)

// Answering later, without a goroutine of one's own (see Options.Inline).
// A request handed to a handler goroutine costs a wake-up, and so does the
// answer it waits for from another connection: two handoffs per call
// relayed, which a relay that only copies lines does not make. A request
// that can be served without waiting is started on the reader goroutine
// instead, and finished on the goroutine that delivers what it waited for
// (GoNoWait's then, on the other connection's reader).

// Reply is a request of the peer's taken by Options.Inline: it stays in
// flight (counted by MaxInFlight, waited for by Wait, its context ended by
// CancelIncoming, CancelHandlers and Close) until Answer. Its context is
// the one Inline was given.
type Reply inFlight

// Answer sends the request's answer (err if not nil, else result), once;
// nothing is sent when the peer cancelled the request. It never waits: when
// the stream cannot take the answer at once (see NoWaitWriter), a
// goroutine writes it. cork, if not nil, is the calling goroutine's (see
// Cork): the answer may wait for it.
func (r *Reply) Answer(result json.RawMessage, err error, cork *Cork) {
	f := (*inFlight)(r)
	c := f.c
	resp, answered := f.finishIn(result, err)
	if !answered || c.writeNoWait(&resp, cork) {
		c.handlerDone()
		return
	}
	later := new(Message) // resp stays on the stack when it went out at once
	*later = resp
	go func() {
		defer c.handlerDone()
		c.write(later)
	}()
}

// OnEnd has f run when the request's context ends (the peer cancelled
// it, the Conn cancels its handlers or closes, or Answer), on the
// goroutine that ends it, as AfterFunc would, without the allocations of
// a registration that can be stopped: f must tell for itself whether it
// still matters. It reports false, and f is not run, when the context has
// ended already. Call it (or OnEndTell) at most once.
func (r *Reply) OnEnd(f func()) bool { return r.OnEndTell(endFunc(f)) }

// Ender is told that a request's context ended (see Reply.OnEndTell).
type Ender interface{ Ended() }

// endFunc is a function as an Ender: a func value is pointer-shaped, so
// the conversion costs no allocation.
type endFunc func()

func (f endFunc) Ended() { f() }

// OnEndTell is OnEnd telling e: a caller that is an Ender already spares
// the closure OnEnd's f would cost on every request.
func (r *Reply) OnEndTell(e Ender) bool {
	h := &r.handlerContext
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.err != nil {
		return false
	}
	h.ended = e
	return true
}

// NoWaitWriter is implemented by streams that can take a message without
// waiting when they have room for it now (queued, or written at once).
type NoWaitWriter interface {
	// WriteNoWait takes msg, as WriteRelated does, if it can without
	// waiting; taken is false when it would have to wait, and then nothing
	// of msg was taken. cork, if not nil, is the calling goroutine's: the
	// stream may hold msg until the cork is flushed (see Cork).
	WriteNoWait(msg []byte, related ID, final bool, cork *Cork) (taken bool, err error)
}

// ErrWouldWait is GoNoWait's error when the request could not be handed to
// the stream without waiting: nothing was sent.
var ErrWouldWait = errors.New("the stream cannot take the request without waiting")

// writeNoWait sends a response if the stream takes it without waiting; it
// reports false when it must be written as usual (c.write).
func (c *Conn) writeNoWait(m *Message, cork *Cork) bool {
	nw, ok := c.stream.(NoWaitWriter)
	if !ok || len(m.Result) >= spliceMin {
		return false
	}
	taken, err := writeMessageNoWait(nw, m, m.ID, true, cork)
	if err != nil {
		c.writeFailed(err) // a closed stream is reported once, as c.write does
		return true
	}
	return taken
}

// GoNoWait is Go for a caller that must not wait: the request is sent only
// if the stream takes it at once (see NoWaitWriter); else nothing is sent
// and the error is ErrWouldWait (ErrClosed when the connection is closed).
// ctx only says which of the peer's requests the call belongs to (see
// RelatedTo). cork, if not nil, is the calling goroutine's (see Cork): the
// request may wait for it.
func (c *Conn) GoNoWait(ctx context.Context, cork *Cork, method string, params json.RawMessage) (*Call, error) {
	call := new(Call)
	if err := c.GoNoWaitInto(ctx, call, cork, method, params); err != nil {
		return nil, err
	}
	return call, nil
}

// GoNoWaitInto is GoNoWait making the call in call, memory the caller
// provides: a caller that serves many calls keeps one in state of its own
// that it reuses, one allocation a call less. What call held is
// overwritten. It may be reused only once the call is over (Over) and
// nothing can reach it or its ID any more: the ID's text is the call's
// own (see setIntID), and its next use changes it. On an error nothing
// was sent, and the call is not pending.
func (c *Conn) GoNoWaitInto(ctx context.Context, call *Call, cork *Cork, method string, params json.RawMessage) error {
	nw, ok := c.stream.(NoWaitWriter)
	if !ok {
		return ErrWouldWait
	}
	related := relatedFrom(ctx)
	if err := c.newCallInto(call); err != nil {
		return err
	}
	taken, err := writeMessageNoWait(nw, &Message{ID: call.id, Method: method, Params: params}, related, false, cork)
	if err == nil && taken {
		return nil
	}
	// Never sent: no answer can come. The reader may have retired the
	// call meanwhile (it stopped); either way it is over once done is
	// closed.
	if err == nil {
		err = ErrWouldWait
	} else {
		err = fmt.Errorf("%w: %v", ErrClosed, err)
	}
	c.deliver(call.id, nil, err)
	<-call.Done()
	return call.err
}

// Then has f told once the call is done (Done closed), on the goroutine
// that completes it: the reader that read its answer (with its cork), the
// one that called Abandon or Close, or the reader as it stops. f must not
// block. Then reports false, and f is not told, when the call is done
// already: Done is closed then (a completion under way is waited for: it
// closes Done at once), and the caller goes on itself. Call it at most
// once.
//
// It takes no lock: f is stored before the call's state says so, and the
// completion reads it only after seeing that (see callThen).
func (call *Call) Then(f Completion) bool {
	call.then = f
	if call.state.CompareAndSwap(callWaiting, callThen) {
		return true
	}
	<-call.Done()
	return false
}
