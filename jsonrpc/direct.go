package jsonrpc

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
