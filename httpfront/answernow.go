package httpfront

import "github.com/mcpgate/mcpgate/jsonrpc"

// An answer finished on a server's reader (an inline tools/call, see
// proxy/inline.go) is handed to its POST by that reader: the POST's answer
// slot (postWaiter.final) takes it without waiting, and the POST's
// goroutine is woken once. Through the session's outbox it would wake the
// outbox's writer goroutine first, which then hands it on: one handoff
// more for every call.

// TryWriteAnswer takes the answer to request related for its POST, as
// WriteRelated would, when that never waits: on a stream of the
// Streamable HTTP transport, whose answers go to their POSTs (an answer
// whose POST is gone is dropped, as WriteRelated drops it). false: nothing
// was taken; the legacy HTTP+SSE transport's answers go on its GET stream,
// which may wait.
func (st *httpStream) TryWriteAnswer(msg []byte, related jsonrpc.ID) bool {
	if st.legacy || !related.IsValid() {
		return false
	}
	st.writeRelated(postMsg{msg: msg, final: true}, related, keptResponse)
	return true
}
