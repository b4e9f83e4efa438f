package proxy

import "github.com/mcpgate/mcpgate/jsonrpc"

// abandoned is the error for a request of the session still running when
// nobody would wait for it any more: mcpgate stopping (the shutdown grace
// ran out), or the client ending the session itself (an HTTP DELETE),
// which is no shutdown and had no grace period.
func (s *session) abandoned(method string) error {
	if s.endedByClient() {
		return jsonrpc.Errorf(jsonrpc.ErrInternal, "the client ended the session (DELETE) while %s was in flight: nobody waits for its answer", method)
	}
	return jsonrpc.Errorf(jsonrpc.ErrInternal, "mcpgate is shutting down: %s did not finish within the shutdown grace period (%v)", method, s.g.live().cfg.ShutdownGrace)
}
