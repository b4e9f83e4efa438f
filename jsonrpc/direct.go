package jsonrpc

import (
	"unsafe"

	"github.com/mcpgate/mcpgate/internal/rawjson"
)

// DirectStream is implemented by streams whose messages arrive on
// goroutines that can serve them (an HTTP server's, one per request): the
// reader's goroutine, and the handler goroutine a request would be handed
// to, are then two handoffs that each message pays for nothing. Conn calls
// ServeDirect once, before its first read, with the function that serves a
// message as the reader would; from then on the stream hands every message
// to serve instead of returning it from Read or ReadMessage, and its reads
// only wait for the end.
//
// The stream calls serve for one message at a time, in the order the
// messages came (holding a lock across the call): that order is what the
// reader kept. For a request, serve returns the job that runs its handler
// and writes its answer. When here is true the caller runs the job itself,
// on its own goroutine (after releasing that lock: the next message must
// not wait for this one's handler); else, or for anything but a request,
// Conn runs it as usual and serve returns nil. raw, when msg is nil, is
// data that is not one decoded message (a batch), dispatched as a read's.
type DirectStream interface {
	ServeDirect(serve func(msg *Message, raw []byte, here bool) (job func()))
}

// serveDirect serves one message for a DirectStream (see there).
func (c *Conn) serveDirect(msg *Message, raw []byte, here bool) func() {
	if msg == nil {
		c.dispatch(raw)
		return nil
	}
	var job func()
	var at *func()
	if here {
		at = &job
	}
	if resp := c.serve(msg, nil, at); resp != nil {
		c.write(resp)
	}
	return job
}

// runInline is the job of a request served here (see DirectStream) when
// the Conn has an Inline hook: offered to it first, else run as usual.
// Inline's first half writes to another connection; under the stream's
// lock, every request of the session would wait for it.
func (f *inFlight) runInline() {
	if !f.c.opts.Inline(f.ctx, f.msg, (*Reply)(f), nil) {
		f.run()
	}
}

// DecodeBody is Decode for a message that is the whole of a buffer of its
// own (an HTTP request's body): the message and room for the splits of
// its envelope and params are one allocation, not three. The id is still
// copied: one kept after the request (a cancellation's, an audit line's)
// must not hold a body of megabytes.
func DecodeBody(data []byte) (*Message, error) {
	b := new(bodyMessage)
	m, err := decode(data, &b.msg, b.top[:0], b.params[:0], nil)
	if m != nil && m.ID.raw != "" {
		// Converted, not cloned: a one-byte id ("1") then costs nothing.
		m.ID = ID{string(unsafe.Slice(unsafe.StringData(m.ID.raw), len(m.ID.raw)))}
	}
	return m, err
}

// bodyMessage is a message decoded by DecodeBody, with room for the
// members of a usual request: jsonrpc, id, method and params; a tool's
// name and arguments, and a modern request's _meta (a bigger split gets
// an array of its own).
type bodyMessage struct {
	msg    Message
	top    [4]rawjson.Member
	params [3]rawjson.Member
}
