package httpfront

import "github.com/mcpgate/mcpgate/jsonrpc"

// A modern request's session serves its one request on the POST's
// goroutine (jsonrpc.DirectStream), as a legacy session serves its POSTs:
// a tools/call that goes inline (proxy/moderninline.go) is written to its
// server from there, not from the session's reader, a goroutine made for
// the request, whose stack grew on every request to make that write
// (a tenth of the gateway's CPU for such a call). Anything else is handed
// to a handler goroutine as before: the POST must be free to write what
// comes before the answer.

// ServeDirect takes the session's serve function: the request goes to it
// (serveHere), not to ReadMessage. Called on the reader's goroutine,
// before its first read.
func (st *statelessStream) ServeDirect(serve func(msg *jsonrpc.Message, raw []byte, here bool) (job func())) {
	st.reqSent = true
	st.serve = serve
	close(st.hooked)
}

// serveHere hands the request to the session on the POST's goroutine,
// once the session's reader has begun; not at all when the session ended
// first (respond answers that).
func (st *statelessStream) serveHere() {
	defer close(st.handed)
	select {
	case <-st.hooked:
		st.serve(st.req, nil, false) // false: a handler goroutine runs what is not inline
	case <-st.closed:
	}
}

// Handed is closed once the POST has handed the request to the session
// (or found it ended): until then a session that ends (mcpgate shuts
// down) waits for it, as proxy.Handoff says why.
func (st *statelessStream) Handed() <-chan struct{} { return st.handed }
