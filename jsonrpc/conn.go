package jsonrpc

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpgate/mcpgate/internal/rawjson"
)

// Handler serves what the peer sends.
//
// For a request, Handle runs on a goroutine of its own (so a slow request
// never delays the next) and what it returns is sent back as the response. Its
// context ends when the peer cancels the request (see Conn.CancelIncoming), when
// the connection is closed, or when the owner stops waiting (Conn.Close).
//
// For a notification, Handle runs on the reader goroutine, in arrival order:
// it must not block, since nothing else from the peer (not even a
// cancellation) is read meanwhile. Its return values are ignored.
type Handler interface {
	Handle(ctx context.Context, msg *Message) (json.RawMessage, error)
}

// HandlerFunc adapts a function to Handler.
type HandlerFunc func(ctx context.Context, msg *Message) (json.RawMessage, error)

// Handle calls f.
func (f HandlerFunc) Handle(ctx context.Context, msg *Message) (json.RawMessage, error) {
	return f(ctx, msg)
}

var _ Handler = HandlerFunc(nil)

// Options configure a Conn. The zero value is usable.
type Options struct {
	// Handler serves incoming requests and notifications. Nil answers every
	// request with ErrMethodNotFound.
	Handler Handler
	// Batches reports whether a JSON array of messages is accepted right now.
	// Nil: never; a batch is then answered with ErrInvalidRequest.
	Batches func() bool
	// Received, if not nil, is told of each request on the reader
	// goroutine, in arrival order, before its handler starts; it must not
	// block. It keeps the owner's state in step with the order in which
	// the peer sent things, although handlers run concurrently (MCP: a
	// request sent right after initialize waits for it; a server's request
	// belongs to the call whose answer stream it came on, which may end
	// right after). What it returns is the handler's context: it may carry
	// what was learned on arrival.
	Received func(ctx context.Context, msg *Message) context.Context
	// LateAnswer, if not nil, is told on the reader goroutine of the id of
	// an answer to a call given up on (see Call.Abandon) that came after
	// all: the peer is done with that call. It must not block.
	LateAnswer func(id ID)
	// Refused, if not nil, is told of each request the Conn answers itself
	// with an error, no handler running: a duplicate id, one past
	// MaxInFlight, one over the size limit or invalid. msg has the id, and
	// the method and size when they could be read. It runs on the reader
	// goroutine and must not block; it lets the owner record the request
	// (an audit trail must see a flood it refused).
	Refused func(msg *Message, err *Error)
	// OnBadInput is told of input that could not be answered: garbage without
	// an id, or a response to no pending call. Nil: ignored.
	OnBadInput func(err error)
	// AnswerUnreadable answers input whose id cannot be read (not JSON, not
	// a message) with an error whose id is null, as JSON-RPC asks of a
	// server. False: such input is only reported to OnBadInput, which is
	// what a client should do: some servers drop the connection on a
	// response with a null id.
	AnswerUnreadable bool
	// MaxInFlight bounds the peer's requests being handled at once, and
	// MaxInFlightBytes their total size. A request past either bound is
	// answered at once with an error, and no handler runs for it: a peer
	// that floods requests costs a bounded amount. Zero: no bound.
	MaxInFlight      int
	MaxInFlightBytes int
	// Inline, if not nil, is offered each request (not one in a batch) on
	// the reader goroutine, after Received, instead of handing it to a
	// handler goroutine. It returns false to decline (the Handler then
	// serves the request as usual), or true to answer it later through
	// r (see Reply): the request stays in flight until then. It must not
	// block, and may only start what finishes without waiting (see
	// GoNoWait). cork, if not nil, is the reader's (see Cork): what it
	// writes may wait until the reader reads again.
	Inline func(ctx context.Context, msg *Message, r *Reply, cork *Cork) bool
}

// Conn is one JSON-RPC connection. It is symmetric: it makes calls with ids
// it mints and serves the peer's requests through a Handler. One goroutine
// reads; writes go through the Stream, one whole message at a time.
type Conn struct {
	stream Stream
	opts   Options

	closedWriteReported atomic.Bool // see writeFailed

	// running counts request handlers (and batch writers) running. It is
	// not under mu: a request's answer would take mu once more only to
	// count it done. Only its drop to 0 takes mu, to wake Wait.
	running atomic.Int64

	handlerCtx    context.Context // parent of every handler's context
	cancelHandler context.CancelFunc
	readerDone    chan struct{}      // closed when the reader goroutine has returned
	jobs          chan *inFlight     // unbuffered: handed to an idle handler goroutine (see runHandler)
	idleHandlers  atomic.Int32       // handler goroutines waiting on jobs
	cork          Cork               // the reader's; only it uses it
	readCork      *Cork              // &cork when the stream says before it reads (ReadAheadStream); else nil: nothing is held
	answer        Message            // the reader's: an answer is decoded here, since nothing keeps it (see dispatch)
	method        string             // the reader's: the last method it decoded (see decode)
	envelope      rawjson.MemberList // the reader's: every message's envelope is split into it
	params        rawjson.MemberList // the reader's: every message's params are split into it (see keep)

	mu            sync.Mutex
	nextID        int64
	pending       map[ID]*Call     // outgoing calls waiting for a response
	incoming      map[ID]*inFlight // requests being handled
	incomingBytes int              // the size of the requests in incoming
	abandoned     map[ID]struct{}  // calls given up on, whose late answers are expected
	idle          []chan struct{}  // closed when running drops to 0: how Wait waits
	readErr       error            // why reading stopped; nil while it goes on
}

// inFlight is one of the peer's requests being handled: its entry in
// incoming and the job a handler goroutine runs, in one allocation (a
// closure each cost two more on every request).
type inFlight struct {
	handlerContext // the handler's context (see handlerctx.go)

	c         *Conn
	msg       *Message
	ctx       context.Context // the handler's context as Options.Received left it
	cancelled bool            // by the peer: the response is not sent. Guarded by c.mu.
	size      int
	batch     *batchCollector // the batch it came in; nil for a request on its own
}

// NewConn makes a connection over s; Start begins reading. The two steps
// let a handler hold the *Conn before any message can reach it. The
// connection owns s and its reader goroutine; Close ends both.
func NewConn(s Stream, opts Options) *Conn {
	ctx, cancel := context.WithCancel(context.Background())
	c := &Conn{
		stream:        s,
		opts:          opts,
		handlerCtx:    ctx,
		cancelHandler: cancel,
		readerDone:    make(chan struct{}),
		jobs:          make(chan *inFlight),
		pending:       make(map[ID]*Call),
		incoming:      make(map[ID]*inFlight),
		envelope:      make(rawjson.MemberList, 0, 8), // "jsonrpc", "id", "method", "params", "result", "error"
		params:        make(rawjson.MemberList, 0, 8),
	}
	return c
}

// Start begins reading and serving. Call it once.
func (c *Conn) Start() *Conn {
	if ra, ok := c.stream.(ReadAheadStream); ok && ra.BeforeRead(c.cork.Flush) {
		c.readCork = &c.cork
	}
	go c.read()
	return c
}

// Done is closed when the peer's side has ended (EOF or a read error).
// Requests already being handled may still be answered.
func (c *Conn) Done() <-chan struct{} { return c.readerDone }

// Err returns why reading stopped: io.EOF for a clean end, ErrClosed after
// Close, nil while reading goes on.
func (c *Conn) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.readErr
}

// Wait waits until no request handler is running, or ctx ends. It returns
// nil at once when none is running, whatever ctx.
func (c *Conn) Wait(ctx context.Context) error {
	c.mu.Lock()
	if c.running.Load() == 0 {
		c.mu.Unlock()
		return nil
	}
	idle := make(chan struct{})
	c.idle = append(c.idle, idle)
	c.mu.Unlock()
	select {
	case <-idle:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// handlerStarted and handlerDone count running handlers; the last one to
// finish wakes every Wait.
func (c *Conn) handlerStarted() {
	c.running.Add(1)
}

// handlerDone checks running again under mu: a handler started since it
// dropped to 0 (and a Wait begun since) is waited for.
func (c *Conn) handlerDone() {
	if c.running.Add(-1) != 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.running.Load() == 0 {
		for _, ch := range c.idle {
			close(ch)
		}
		c.idle = nil
	}
}

// CancelHandlers cancels the context of every running request handler; their
// answers (usually the context's error) are still sent.
func (c *Conn) CancelHandlers() {
	c.cancelHandler()
	c.endHandlers()
}

// Close cancels every running handler (their answers are still sent while the
// stream takes them), closes the stream and retires every pending call with
// ErrClosed. The reader stops when the stream's Read returns (Done); Close
// does not wait for it, since a Read on a blocking file such as a
// terminal's stdin cannot be interrupted.
func (c *Conn) Close() error {
	c.CancelHandlers()
	err := c.stream.Close()
	c.retireAll(ErrClosed)
	return err
}

// background is the context of writes that belong to no caller (responses,
// errors the reader answers): they wait as long as the stream takes, and
// Close ends them.
var background = context.Background()

func (c *Conn) read() {
	defer close(c.readerDone)
	defer c.readCork.Flush()
	if ds, ok := c.stream.(DirectStream); ok {
		ds.ServeDirect(c.serveDirect)
	}
	mr, decoded := c.stream.(MessageReader)
	for {
		var data []byte
		var err error
		if decoded {
			var msg *Message
			msg, data, err = mr.ReadMessage()
			if msg != nil {
				if resp := c.serveWith(msg, nil, nil, c.readCork); resp != nil {
					c.readCork.Flush()
					c.write(resp)
				}
				continue
			}
		} else {
			data, err = c.stream.Read()
		}
		if err != nil {
			if tooLarge := (*TooLargeError)(nil); errors.As(err, &tooLarge) {
				c.rejectTooLarge(tooLarge)
				continue
			}
			c.retireAll(err)
			return
		}
		c.dispatch(data)
	}
}

// rejectTooLarge deals with a message over the size limit, from what its
// start says: an answer to a call of ours fails that call at once (waiting
// for its timeout would help nobody), a request is answered with an error,
// anything else is reported and dropped.
func (c *Conn) rejectTooLarge(e *TooLargeError) {
	c.readCork.Flush() // what follows may write, and wait
	id, method, kind := peekPrefix(e.Prefix)
	if callID := id.key(); kind == prefixResponse || (kind == prefixUnknown && c.isPending(callID)) {
		// Matched by value, as an answer is (see serveIn).
		c.badInput(fmt.Errorf("response to request %s: %v", id, e))
		if !c.deliver(callID, nil, e) {
			c.lateAnswer(callID)
		}
		return
	}
	if !id.IsValid() || kind == prefixNotification {
		c.badInput(fmt.Errorf("%v; no request id could be read from its start, so it is dropped", e))
		if kind != prefixNotification && c.opts.AnswerUnreadable {
			c.write(&Message{Error: ToWire(fmt.Errorf("%w: %v", ErrInvalidRequest, e))})
		}
		return
	}
	c.write(c.refuse(&Message{ID: id, Method: method, Size: e.Size}, fmt.Errorf("%w: %v", ErrInvalidRequest, e)))
}

// refuse answers the peer's request msg with err, no handler running, and
// tells Options.Refused.
func (c *Conn) refuse(msg *Message, err error) *Message {
	resp := &Message{ID: msg.ID, Error: ToWire(err)}
	if c.opts.Refused != nil {
		c.opts.Refused(msg, resp.Error)
	}
	return resp
}

type prefixKind int

const (
	prefixUnknown prefixKind = iota
	prefixRequest
	prefixNotification
	prefixResponse
)

// peekPrefix reads the top-level "id" and "method" from the start of a
// message that may be cut off or broken later on, and what kind of message
// it is, as far as its keys tell: "method" makes a request or
// notification, "result" or "error" a response. A key whose value was cut
// off still counts.
func peekPrefix(prefix []byte) (id ID, method string, kind prefixKind) {
	keys, ms := rawjson.PrefixKeys(prefix)
	if raw, ok := ms.Get("id"); ok {
		id, _ = ParseID(raw)
	}
	if raw, ok := ms.Get("method"); ok {
		method, _ = rawjson.Unquote(raw)
	}
	kind = prefixUnknown
	for _, k := range keys {
		switch k {
		case "method":
			kind = prefixNotification
		case "result", "error":
			return id, "", prefixResponse
		}
	}
	if kind == prefixNotification && id.IsValid() {
		kind = prefixRequest
	}
	return id, method, kind
}

func (c *Conn) dispatch(data []byte) {
	if trimmed := bytes.TrimSpace(data); len(trimmed) > 0 && trimmed[0] == '[' {
		c.dispatchBatch(trimmed)
		return
	}
	// Decoded in place: an answer, once delivered, is not kept (its
	// result is a slice of data), and neither is any envelope's split.
	// Anything else may be, and gets a Message of its own.
	msg, err := decode(data, &c.answer, c.envelope, c.params, &c.method)
	var flight *inFlight
	if msg != nil && err == nil && msg.IsRequest() {
		// The request and its place in flight live as long as each other:
		// one allocation for both, and its params' split too when small.
		kept := new(keptRequest)
		kept.msg = *msg
		msg, flight = &kept.msg, &kept.flight
		msg.ID = kept.ownID(msg.ID) // a small id must not keep a big line's bytes alive
		c.keep(msg, kept.members[:0])
	} else if msg != nil && (err != nil || !msg.IsResponse()) {
		kept := new(Message)
		*kept = *msg
		msg = kept
		msg.ID = msg.ID.owned()
		c.keep(msg, nil)
	}
	if err != nil {
		c.readCork.Flush() // what follows may write, and wait
		c.rejectInvalid(msg, err)
	} else if resp := c.serveIn(msg, nil, nil, c.readCork, flight); resp != nil {
		c.readCork.Flush()
		c.write(resp)
	}
	if len(data) >= forgetLineBytes {
		c.forgetLine()
	}
}

// forgetLineBytes is the size from which a line is let go of at once once
// dispatched: the reader's answer and splits view the last line until the
// next overwrites them, and a big line (a line of its own, not a window of
// the read buffer) kept so would be held twice at the next one's peak.
const forgetLineBytes = 64 << 10

// forgetLine drops what the reader's reused decoding state views of the
// line just dispatched (see dispatch).
func (c *Conn) forgetLine() {
	c.answer = Message{}
	clear(c.envelope[:cap(c.envelope)])
	clear(c.params[:cap(c.params)])
}

// rejectInvalid answers a message that failed to decode, when it has an id
// to answer to. A broken response fails the call it answers instead.
func (c *Conn) rejectInvalid(msg *Message, err error) {
	if errors.Is(err, errNullID) {
		c.write(c.refuse(msg, err)) // answered with "id": null, as JSON-RPC asks
		return
	}
	if msg == nil || !msg.ID.IsValid() {
		c.badInput(err)
		if c.opts.AnswerUnreadable && (msg == nil || msg.Method == "") {
			c.write(&Message{Error: ToWire(err)})
		}
		return
	}
	if id := msg.ID.key(); msg.Method == "" && (msg.Result != nil || msg.Error != nil || c.isPending(id)) {
		if !c.deliver(id, nil, fmt.Errorf("%w: %w", ErrInvalidResponse, err)) {
			c.badInput(err)
		}
		return
	}
	c.write(c.refuse(msg, err))
}

// serve handles one decoded message. A request's response is written by the
// goroutine that handles it, or, in a batch, collected by batch; an answer
// that is ready at once is returned. A request's handler runs on a handler
// goroutine, or, when here is not nil, is set in *here for the caller to
// run (see DirectStream).
func (c *Conn) serve(msg *Message, batch *batchCollector, here *func()) *Message {
	return c.serveWith(msg, batch, here, nil)
}

// serveWith is serve on the reader goroutine, whose cork is given (see
// Cork): an answer's completion and an inline request may write through it.
func (c *Conn) serveWith(msg *Message, batch *batchCollector, here *func(), cork *Cork) *Message {
	return c.serveIn(msg, batch, here, cork, nil)
}

// keptRequest is a request read, with its place in flight.
type keptRequest struct {
	msg     Message
	flight  inFlight
	members [3]rawjson.Member // msg's params' split, when it fits: a tools/call's name, arguments and _meta (a modern call's envelope)
	idText  [keptIDBytes]byte // msg's id's text, when it fits (see ownID)
}

// keep gives a message the reader keeps a split of its params of its own
// (into's array when it fits), when decode left it in the reader's.
func (c *Conn) keep(m *Message, into rawjson.MemberList) {
	if len(m.split) == 0 || cap(c.params) == 0 || &m.split[:1][0] != &c.params[:1][0] {
		return
	}
	if cap(into) < len(m.split) {
		into = make(rawjson.MemberList, 0, len(m.split))
	}
	m.split = append(into[:0], m.split...)
}

// serveIn is serveWith with the request's inFlight, unused, when the
// caller made it with the message (see keptRequest); nil makes one.
func (c *Conn) serveIn(msg *Message, batch *batchCollector, here *func(), cork *Cork, flight *inFlight) *Message {
	switch {
	case msg.IsResponse():
		var err error
		if msg.Error != nil {
			err = msg.Error
		}
		// Our calls' ids are plain integers, their own keys: an answer
		// spelling one another way (1.0) is matched by value, as a
		// request's id is.
		id := msg.ID.key()
		if !c.deliverWith(id, msg.Result, err, cork) && !c.lateAnswer(id) {
			c.badInput(fmt.Errorf("response to unknown request id %s", msg.ID))
		}
		return nil
	case msg.IsNotification():
		cork.Flush() // a notification's handler is not told of the cork, and may write
		if c.opts.Handler != nil {
			c.opts.Handler.Handle(c.handlerCtx, msg)
		}
		return nil
	}

	c.mu.Lock()
	key := msg.ID.key()
	if _, dup := c.incoming[key]; dup {
		c.mu.Unlock()
		cork.Flush() // Refused may record it, and wait
		return c.refuse(msg, ErrIDInUse(msg.ID))
	}
	if c.overloaded(msg.Size) {
		n := len(c.incoming)
		c.mu.Unlock()
		cork.Flush() // Refused may record it, and wait
		return c.refuse(msg, Errorf(ErrInternal, "too many requests in flight (%d); %s refused, send it again once some are answered", n, msg.Method))
	}
	if flight == nil {
		flight = new(inFlight)
	}
	flight.c, flight.msg, flight.size, flight.batch = c, msg, msg.Size, batch
	c.incoming[key] = flight
	c.incomingBytes += msg.Size
	c.handlerStarted()
	// Checked with the request in incoming: handlers cancelled from now on
	// find it there (endHandlers).
	handlersCancelled := c.handlerCtx.Err() != nil
	c.mu.Unlock()
	if handlersCancelled {
		flight.end(context.Canceled)
	}
	var ctx context.Context = &flight.handlerContext
	if c.opts.Received != nil {
		ctx = c.opts.Received(ctx, msg)
	}
	flight.ctx = ctx
	if batch != nil {
		batch.wg.Add(1)
	} else if c.opts.Inline != nil && !handlersCancelled && here != nil {
		*here = flight.runInline // after the DirectStream's lock (see there)
		return nil
	} else if c.opts.Inline != nil && !handlersCancelled && c.opts.Inline(ctx, msg, (*Reply)(flight), cork) {
		return nil // answered through the Reply
	}
	if here != nil {
		*here = flight.run
		return nil
	}
	c.runHandler(flight)
	return nil
}

// run handles the request and sends its answer (or adds it to its batch).
func (f *inFlight) run() {
	c := f.c
	defer c.handlerDone()
	resp := f.answer()
	if f.batch != nil {
		f.batch.add(resp)
		f.batch.wg.Done()
	} else if resp != nil {
		c.write(resp)
	}
}

// answer runs the handler and returns the response to send; nil when the
// peer cancelled the request.
func (f *inFlight) answer() *Message {
	c, msg := f.c, f.msg
	var result json.RawMessage
	var err error
	if c.opts.Handler == nil {
		err = fmt.Errorf("%w: %s", ErrMethodNotFound, msg.Method)
	} else {
		result, err = c.opts.Handler.Handle(f.ctx, msg)
	}
	return f.finish(result, err)
}

// finish takes the request out of flight and ends its context; it returns
// the response to send, nil when the peer cancelled the request.
func (f *inFlight) finish(result json.RawMessage, err error) *Message {
	resp, answered := f.finishIn(result, err)
	if !answered {
		return nil
	}
	return &resp
}

// finishIn is finish returning the response as a value (a caller that
// writes it at once keeps it on its stack); answered is false when the
// peer cancelled the request.
func (f *inFlight) finishIn(result json.RawMessage, err error) (resp Message, answered bool) {
	c, msg := f.c, f.msg
	defer f.end(context.Canceled)
	c.mu.Lock()
	delete(c.incoming, msg.ID.key())
	c.incomingBytes -= f.size
	suppressed := f.cancelled
	c.mu.Unlock()
	if suppressed {
		// No answer goes out, but a stream that routes by request must
		// learn that this one is over (an HTTP POST still open for it).
		if rw, ok := c.stream.(RelatedWriter); ok {
			rw.WriteRelated(background, nil, msg.ID, true)
		}
		return Message{}, false
	}
	if err != nil {
		return Message{ID: msg.ID, Error: ToWire(err)}, true
	}
	return Message{ID: msg.ID, Result: result}, true
}

// maxIdleHandlers bounds the handler goroutines a connection keeps waiting
// for the next request, and idleHandlerTime how long each waits.
const (
	maxIdleHandlers = 32
	idleHandlerTime = 5 * time.Second
)

// runHandler runs a request's handler on a goroutine of its own: an idle
// one from an earlier request when there is one, else a new one. A
// goroutine made per request starts with a small stack that every request
// grows again (a seventh of the gateway's CPU went to that); one that
// lives on keeps its stack. Handlers still run concurrently, one goroutine
// each, so the bounds on requests in flight bound the goroutines too; at
// most maxIdleHandlers wait, each for idleHandlerTime at most, and none
// outlives the connection's reader.
func (c *Conn) runHandler(job *inFlight) {
	select {
	case c.jobs <- job:
	default:
		go c.handlerLoop(job)
	}
}

func (c *Conn) handlerLoop(job *inFlight) {
	// The goroutine runs its jobs and waits this deep in its stack (see
	// idleStackDepth); the array is zeroed once, not at every wait.
	var depth [idleStackDepth]byte
	holdStack(depth[:])
	var idle *time.Timer
	for {
		job.run()
		job = nil // not kept alive while idle
		if c.idleHandlers.Add(1) > maxIdleHandlers {
			c.idleHandlers.Add(-1)
			break
		}
		since := time.Now()
		if idle == nil {
			idle = time.NewTimer(idleHandlerTime)
		}
		job = c.awaitJob(idle, since)
		c.idleHandlers.Add(-1)
		if job == nil {
			break
		}
	}
	if idle != nil {
		idle.Stop()
	}
}

// idleStackDepth is how deep in its stack a handler goroutine waits. The
// collector halves the stack of a goroutine that uses less than a quarter
// of it, and a goroutine waiting at the bottom of its stack uses next to
// nothing: its stack would be shrunk at every collection and grown again
// by the next request, which is what keeping it was for. Waiting 8 KiB
// deep keeps a stack of up to 32 KiB.
const idleStackDepth = 8 << 10

// awaitJob waits for the next request's job, or for the reader's end
// (nil), or until the goroutine has been idle, since since, for
// idleHandlerTime. The idle timer is not reset at every request (a timer
// operation on every request, the most common thing here): it runs on
// from the first wait, and when it fires early for this wait it is armed
// for what is left.
func (c *Conn) awaitJob(idle *time.Timer, since time.Time) *inFlight {
	for {
		select {
		case job := <-c.jobs:
			return job
		case <-idle.C:
			if left := idleHandlerTime - time.Since(since); left > 0 {
				idle.Reset(left)
				continue
			}
			return nil
		case <-c.readerDone:
			// No request can come any more; one sent to c.jobs meanwhile
			// has a taker, or its sender starts one.
			idle.Stop()
			return nil
		}
	}
}

// holdStack keeps its argument, an array on the caller's stack, from being
// optimised away.
//
//go:noinline
func holdStack([]byte) {}

// overloaded reports whether a request of size bytes would break the bounds
// on requests in flight. c.mu held.
func (c *Conn) overloaded(size int) bool {
	return c.opts.MaxInFlight > 0 && len(c.incoming) >= c.opts.MaxInFlight ||
		c.opts.MaxInFlightBytes > 0 && len(c.incoming) > 0 && c.incomingBytes+size > c.opts.MaxInFlightBytes
}

type batchCollector struct {
	wg    sync.WaitGroup
	mu    sync.Mutex
	resps []*Message
}

func (b *batchCollector) add(m *Message) {
	if m == nil {
		return
	}
	b.mu.Lock()
	b.resps = append(b.resps, m)
	b.mu.Unlock()
}

// dispatchBatch serves a JSON array of messages, when batches are allowed,
// and answers with one array of the responses.
func (c *Conn) dispatchBatch(data []byte) {
	c.readCork.Flush() // a batch may write, and wait
	if c.opts.Batches == nil || !c.opts.Batches() {
		c.badInput(errors.New("batch received but batches are not allowed in this protocol version"))
		c.write(&Message{Error: ToWire(fmt.Errorf("%w: batches are not supported in this protocol version", ErrInvalidRequest))})
		return
	}
	var elems []json.RawMessage
	if err := json.Unmarshal(data, &elems); err != nil || len(elems) == 0 {
		c.write(&Message{Error: ToWire(fmt.Errorf("%w: batch must be a non-empty array of messages", ErrInvalidRequest))})
		return
	}
	batch := &batchCollector{}
	for _, elem := range elems {
		msg, err := Decode(elem)
		if err != nil {
			id := ID{}
			if msg != nil {
				id = msg.ID
			}
			batch.add(&Message{ID: id, Error: ToWire(err)})
			continue
		}
		batch.add(c.serve(msg, batch, nil))
	}
	// The reply needs every answer; waiting here keeps the batch's
	// notifications ordered before whatever the peer sends next.
	c.handlerStarted()
	go func() {
		defer c.handlerDone()
		batch.wg.Wait()
		if len(batch.resps) == 0 {
			return
		}
		out := []byte{'['}
		for i, r := range batch.resps {
			if i > 0 {
				out = append(out, ',')
			}
			out = append(out, r.Encode()...)
		}
		c.writeRaw(append(out, ']'))
	}()
}

// CancelIncoming cancels the handler of the peer's request id, and its
// response is not sent (the peer said it no longer wants one). It reports
// whether such a request was in flight.
func (c *Conn) CancelIncoming(id ID) bool {
	c.mu.Lock()
	f, ok := c.incoming[id.key()]
	if ok {
		f.cancelled = true
	}
	c.mu.Unlock()
	if ok {
		f.end(context.Canceled)
	}
	return ok
}

// spliceMin is the size from which a result is written in parts, after
// its envelope's head (see PartsWriter), rather than copied into an
// encoded message: below it, one buffer and one write cost less.
const spliceMin = 64 << 10

// write sends a message; a response goes back related to its request.
func (c *Conn) write(m *Message) {
	if pw, ok := c.stream.(PartsWriter); ok && m.IsResponse() && m.ID.IsValid() && m.Error == nil && len(m.Result) >= spliceMin {
		if err := pw.WriteParts(background, m.resultParts(), m.ID, true); err != nil {
			c.writeFailed(err)
		}
		return
	}
	if m.IsResponse() && m.ID.IsValid() {
		if err := c.writeRelated(background, m.Encode(), m.ID, true); err != nil {
			c.writeFailed(err)
		}
		return
	}
	c.writeRaw(m.Encode())
}

func (c *Conn) writeRaw(b []byte) {
	if err := c.stream.Write(background, b); err != nil {
		c.writeFailed(err)
	}
}

func (c *Conn) writeRelated(ctx context.Context, b []byte, related ID, final bool) error {
	rw, ok := c.stream.(RelatedWriter)
	if !ok || !related.IsValid() {
		return c.stream.Write(ctx, b)
	}
	return rw.WriteRelated(ctx, b, related, final)
}

func (c *Conn) badInput(err error) {
	if c.opts.OnBadInput != nil {
		c.opts.OnBadInput(err)
	}
}

// Call is one outgoing request.
type Call struct {
	id     ID
	conn   *Conn
	state  atomic.Int32  // callWaiting, callThen (Then was told) or callOver (result or err set, see complete)
	done   chan struct{} // made by the first to wait for it (see Done); closed once over. Guarded by conn.mu.
	result json.RawMessage
	err    error
	then   Completion // told once the call is over, by whoever ended it (see Then)
	digits [20]byte   // id's text (see setIntID)
}

// A call's states. Then and the completion meet in state, not under the
// connection's lock: Then stores its hook and moves callWaiting to
// callThen; the completion swaps in callOver and tells the hook if it
// finds callThen. Whichever comes second sees the other's move.
const (
	callWaiting int32 = iota
	callThen
	callOver
)

// ID is the id the request was sent with.
func (call *Call) ID() ID { return call.id }

// Done is closed once the call has its response (or has failed): Wait
// then returns at once. The channel is made for the first caller: a call
// that nobody waits on (see Then, Over) costs none.
func (call *Call) Done() <-chan struct{} {
	c := call.conn
	c.mu.Lock()
	defer c.mu.Unlock()
	if call.done == nil {
		call.done = make(chan struct{})
		if call.Over() {
			close(call.done)
		}
	}
	return call.done
}

// Over reports whether the call has its response (or has failed): Done
// is closed, and Wait returns at once.
func (call *Call) Over() bool { return call.state.Load() == callOver }

// complete sets the call's outcome and closes Done; once only, by whoever
// took the call out of pending.
// It reports whether Then's hook is to be told, which the caller does.
func (call *Call) complete(result json.RawMessage, err error) (tell bool) {
	c := call.conn
	c.mu.Lock()
	done, tell := call.completeLocked(result, err)
	c.mu.Unlock()
	if done != nil {
		close(done)
	}
	return tell
}

// completeLocked sets the call's outcome and returns Done, if made, for
// the caller to close once conn.mu is released, and whether Then's hook
// is to be told. conn.mu held.
func (call *Call) completeLocked(result json.RawMessage, err error) (done chan struct{}, tell bool) {
	call.result, call.err = result, err
	tell = call.state.Swap(callOver) == callThen
	return call.done, tell
}

// Wait returns the response. If ctx ends first the call is retired (a late
// response is dropped) and ctx's error returned; telling the peer is the
// caller's business, since cancellation is not part of JSON-RPC.
func (call *Call) Wait(ctx context.Context) (json.RawMessage, error) {
	if call.Over() {
		return call.result, call.err
	}
	select {
	case <-call.Done():
		return call.result, call.err
	case <-ctx.Done():
		if !call.conn.deliver(call.id, nil, ctx.Err()) {
			<-call.Done() // answered meanwhile
			return call.result, call.err
		}
		call.conn.rememberAbandoned(call.id)
		return nil, ctx.Err()
	}
}

// Abandon retires the call with err, as Wait does when its context ends:
// Wait returns err, and a late answer is dropped as expected. It reports
// whether the call was still waiting for its answer. It lets a caller end
// the wait from elsewhere (a deadline's timer) without a context made
// for it.
func (call *Call) Abandon(err error) bool {
	if !call.conn.deliver(call.id, nil, err) {
		return false
	}
	call.conn.rememberAbandoned(call.id)
	return true
}

// maxAbandoned bounds the ids of abandoned calls remembered.
const maxAbandoned = 1024

// rememberAbandoned notes a call given up on: its answer may still come, and
// that is not the peer's mistake.
func (c *Conn) rememberAbandoned(id ID) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.abandoned == nil || len(c.abandoned) >= maxAbandoned {
		c.abandoned = map[ID]struct{}{}
	}
	// Owned: a call's id may be spelt in the call's own memory, which a
	// caller of GoNoWaitInto reuses.
	c.abandoned[id.owned()] = struct{}{}
}

// wasAbandoned reports (once) whether id belongs to an abandoned call.
func (c *Conn) wasAbandoned(id ID) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	_, ok := c.abandoned[id]
	delete(c.abandoned, id)
	return ok
}

// lateAnswer reports (once) whether id belongs to an abandoned call, and
// tells Options.LateAnswer when it does.
func (c *Conn) lateAnswer(id ID) bool {
	if !c.wasAbandoned(id) {
		return false
	}
	if c.opts.LateAnswer != nil {
		c.opts.LateAnswer(id)
	}
	return true
}

// newCall registers a call with a fresh id, before it is sent: no
// response can outrun it.
func (c *Conn) newCall() (*Call, error) {
	call := new(Call)
	if err := c.newCallInto(call); err != nil {
		return nil, err
	}
	return call, nil
}

// newCallInto is newCall in memory the caller provides (see
// GoNoWaitInto).
func (c *Conn) newCallInto(call *Call) error {
	*call = Call{conn: c}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.readErr != nil {
		return ErrClosed
	}
	c.nextID++
	call.setIntID(c.nextID)
	c.pending[call.id] = call
	return nil
}

// Go sends a request with a fresh id and returns once it is handed to the
// stream, like net/rpc's Client.Go; ctx bounds that hand-over (see
// Stream.Write), and says which of the peer's requests it belongs to, if
// any (see RelatedTo). The call is registered before it is sent, so no
// response can outrun it.
func (c *Conn) Go(ctx context.Context, method string, params json.RawMessage) (*Call, error) {
	related := relatedFrom(ctx)
	call, err := c.newCall()
	if err != nil {
		return nil, err
	}
	if err := c.writeRelated(ctx, (&Message{ID: call.id, Method: method, Params: params}).Encode(), related, false); err != nil {
		if ctx.Err() == nil {
			err = fmt.Errorf("%w: %v", ErrClosed, err)
		}
		c.deliver(call.id, nil, err)
		// The reader may have retired the call first; either way its error
		// is set once Done is closed, and not before.
		<-call.Done()
		return nil, call.err
	}
	return call, nil
}

// Call sends a request and waits for its response; ctx bounds both.
func (c *Conn) Call(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
	call, err := c.Go(ctx, method, params)
	if err != nil {
		return nil, err
	}
	return call.Wait(ctx)
}

// Notify sends a notification; ctx bounds the hand-over to the stream, and
// says which of the peer's requests it belongs to, if any (see RelatedTo).
func (c *Conn) Notify(ctx context.Context, method string, params json.RawMessage) error {
	return c.writeRelated(ctx, (&Message{Method: method, Params: params}).Encode(), relatedFrom(ctx), false)
}

type relatedKey struct{}

// RelatedTo returns a context under which what Conn sends (requests with
// Go or Call, notifications with Notify) belongs to the peer's request id:
// a stream that routes by request (see RelatedWriter) sends it with that
// request's answer, as Streamable HTTP sends a server's progress and
// requests on the response to the client's POST. The zero ID relates
// nothing. On other streams it changes nothing.
func RelatedTo(ctx context.Context, id ID) context.Context {
	return context.WithValue(ctx, relatedKey{}, id)
}

func relatedFrom(ctx context.Context) ID {
	id, _ := ctx.Value(relatedKey{}).(ID)
	return id
}

func (c *Conn) isPending(id ID) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	_, ok := c.pending[id]
	return ok
}

// deliver completes the pending call id, exactly once. It reports whether
// the call was still pending.
func (c *Conn) deliver(id ID, result json.RawMessage, err error) bool {
	return c.deliverWith(id, result, err, nil)
}

// deliverWith is deliver on a goroutine whose cork is given (the reader's,
// see Cork), which the call's Completion may write through.
func (c *Conn) deliverWith(id ID, result json.RawMessage, err error, cork *Cork) bool {
	c.mu.Lock()
	call, ok := c.pending[id]
	var done chan struct{}
	var tell bool
	if ok {
		delete(c.pending, id)
		done, tell = call.completeLocked(result, err) // one critical section a call, not two
	}
	c.mu.Unlock()
	if ok {
		if done != nil {
			close(done)
		}
		if tell {
			call.then.Completed(cork)
		}
	}
	return ok
}

// retireAll stops taking calls and fails every pending one: when the reader
// has stopped, no response can ever come.
func (c *Conn) retireAll(cause error) {
	c.mu.Lock()
	if c.readErr == nil {
		c.readErr = cause
	}
	pending := c.pending
	if len(pending) > 0 { // an empty map is kept: nothing iterates it (twice a connection, and a modern HTTP request is one)
		c.pending = make(map[ID]*Call)
	}
	c.mu.Unlock()
	err := ErrClosed
	if cause != nil && !errors.Is(cause, io.EOF) && !errors.Is(cause, ErrClosed) {
		err = fmt.Errorf("%w: %v", ErrClosed, cause)
	}
	for _, call := range pending {
		if call.complete(nil, err) {
			call.then.Completed(nil)
		}
	}
}
