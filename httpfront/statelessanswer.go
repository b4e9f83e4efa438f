package httpfront

import "github.com/mcpgate/mcpgate/jsonrpc"

// TryWriteAnswer hands a modern request's answer to its POST, as
// WriteRelated does, when that does not wait: the POST's handler is
// waiting for it (the usual case), or has gone (the answer is dropped).
// With it, the stateless session serves a tools/call inline (see
// proxy/moderninline.go): the server's reader gives the answer to the POST
// itself, rather than wake the outbox's writer goroutine to do it. false:
// nothing was taken, and the writer goroutine hands it over as usual.
func (st *statelessStream) TryWriteAnswer(msg []byte, related jsonrpc.ID) bool {
	if related != st.req.ID {
		return false
	}
	// Answered before the answer is handed over, as WriteRelated says why.
	st.once.Do(func() { close(st.answered) })
	select {
	case st.out <- postMsg{msg: msg, final: true}:
	case <-st.gone:
	default:
		return false
	}
	return true
}
