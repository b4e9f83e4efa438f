package httpfront

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"sync"

	"github.com/mcpgate/mcpgate/jsonrpc"
)

// statelessStream is one modern request seen as a whole client session, so
// that the gateway serves it as it serves any session (Gateway.Serve),
// and forgets it once answered: nothing is kept between requests. Read
// hands the request over, then waits for its end; what the gateway sends
// related to the request (its answer, progress, log messages it asked for,
// a listen's notifications) goes to the POST's handler; everything else
// (a list change meant for legacy sessions) has nowhere to go and is
// dropped. The gateway's requests to the client are refused at once: the
// modern era has none (a server asks with an input_required result).
type statelessStream struct {
	req *jsonrpc.Message
	sse bool // the client accepts an event stream: messages may precede the answer

	out      chan postMsg          // unbuffered: each message waits for the POST's handler
	inbox    chan *jsonrpc.Message // to Read: refusals of the gateway's requests
	gone     chan struct{}         // closed when the POST's handler returned: no more writes go out
	answered chan struct{}         // closed once the final answer (or its absence) was written
	closed   chan struct{}         // closed by Close: the session is over
	hooked   chan struct{}         // closed when serve is set (see statelessdirect.go)
	handed   chan struct{}         // closed once serveHere is done: Handed

	serve func(msg *jsonrpc.Message, raw []byte, here bool) (job func()) // the session's (ServeDirect)

	once       sync.Once // for answered
	closeOnce  sync.Once
	reqSent    bool // the request went to Read (only Read uses it)
	cancelSent bool // so did its cancellation (only Read uses it)
}

func newStatelessStream(req *jsonrpc.Message, sse bool) *statelessStream {
	return &statelessStream{req: req, sse: sse, out: make(chan postMsg), inbox: make(chan *jsonrpc.Message),
		gone: make(chan struct{}), answered: make(chan struct{}), closed: make(chan struct{}), hooked: make(chan struct{}), handed: make(chan struct{})}
}

func (st *statelessStream) Read() ([]byte, error) {
	m, _, err := st.ReadMessage()
	if err != nil {
		return nil, err
	}
	return m.Encode(), nil
}

// ReadMessage gives the request, then blocks until the request is over:
// io.EOF then ends the session (not before, or a listen would see the
// session drain at once). When the client goes away first, it gives
// notifications/cancelled for the request: over HTTP, closing the
// response stream is the modern era's cancellation.
func (st *statelessStream) ReadMessage() (*jsonrpc.Message, []byte, error) {
	if !st.reqSent {
		st.reqSent = true
		return st.req, nil, nil
	}
	gone := st.gone
	if st.cancelSent {
		gone = nil
	}
	select {
	case m := <-st.inbox:
		return m, nil, nil
	case <-st.answered:
		return nil, nil, io.EOF
	case <-st.closed:
		return nil, nil, io.EOF
	case <-gone:
		select {
		case <-st.answered:
			return nil, nil, io.EOF
		default:
		}
		st.cancelSent = true
		params, _ := json.Marshal(map[string]any{"requestId": st.req.ID, "reason": "the client closed the response stream"})
		return &jsonrpc.Message{Method: "notifications/cancelled", Params: params}, nil, nil
	}
}

// Write is for what belongs to no request of the client's: dropped, or
// refused if it is a request.
func (st *statelessStream) Write(ctx context.Context, msg []byte) error {
	st.refuseIfRequest(msg)
	return nil
}

// WriteRelated passes what belongs to the request to its POST.
func (st *statelessStream) WriteRelated(ctx context.Context, msg []byte, related jsonrpc.ID, final bool) error {
	if related != st.req.ID {
		return st.Write(ctx, msg)
	}
	if final {
		// Answered before the answer is handed over: once the POST's
		// handler has it, it returns, and Read must not take that for the
		// client leaving (and cancel a request that is done).
		st.once.Do(func() { close(st.answered) })
		st.toPost(postMsg{msg: msg, final: true})
		return nil
	}
	if !st.refuseIfRequest(msg) {
		st.toPost(postMsg{msg: msg})
	}
	return nil
}

// WriteParts is WriteRelated for a message given in parts (see
// jsonrpc.PartsWriter): the request's answer goes to its POST in its
// parts, never joined into one buffer.
func (st *statelessStream) WriteParts(ctx context.Context, parts [][]byte, related jsonrpc.ID, final bool) error {
	if related != st.req.ID || !final {
		return st.WriteRelated(ctx, bytes.Join(parts, nil), related, final)
	}
	st.once.Do(func() { close(st.answered) })
	st.toPost(postMsg{parts: parts, final: true})
	return nil
}

// WriteNotification passes a notification of the request to its POST;
// others are dropped.
func (st *statelessStream) WriteNotification(msg []byte, related jsonrpc.ID) error {
	if related == st.req.ID {
		st.toPost(postMsg{msg: msg})
	}
	return nil
}

// toPost hands a message to the POST's handler, unless it is gone (the
// client left) or cannot take what comes before the answer.
func (st *statelessStream) toPost(m postMsg) {
	if !m.final && !st.sse {
		return
	}
	select {
	case st.out <- m:
	case <-st.gone:
	}
}

// refuseIfRequest answers a request the gateway sends the client with an
// error, at once, so that whoever asked is not left waiting: there is no
// way to put a request to a modern client over HTTP.
func (st *statelessStream) refuseIfRequest(msg []byte) bool {
	if !isRequest(msg) {
		return false
	}
	var m struct {
		ID     jsonrpc.ID `json:"id"`
		Method string     `json:"method"`
	}
	json.Unmarshal(msg, &m)
	refusal := &jsonrpc.Message{ID: m.ID, Error: jsonrpc.Errorf(jsonrpc.ErrMethodNotFound,
		"the client speaks MCP 2026-07-28 over HTTP, which takes no requests from the server (%s); ask with an input_required result", m.Method)}
	select {
	case st.inbox <- refusal:
	case <-st.closed:
	}
	return true
}

func (st *statelessStream) Close() error {
	st.closeOnce.Do(func() { close(st.closed) })
	return nil
}
