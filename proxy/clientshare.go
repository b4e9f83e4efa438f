package proxy

// The gateway-wide caps on what a client holds while it waits (listens,
// calls held for input) are shared by every client: one client that took
// them all would have every other refused. So each client may take at most
// a share of such a cap, and the cap stays for all of them together.
//
// A client is what mcpgate can tell apart: over HTTP with several tokens,
// a token (each is a client of its own, and may open many sessions); else
// a session (a stdio client, an HTTP session). One token shared by all
// tells no client from another, so it counts as none. Modern requests
// that come without a session, and without a token that tells them apart,
// share one client's share.

// clientShareOf is the most of a gateway-wide cap one client may hold.
func clientShareOf(cap int) int { return max(1, cap/4) }

// holder names the client s serves, for the per-client shares.
func (s *session) holder() string {
	switch {
	case s.client != "" && len(s.g.live().cfg.HTTP.Tokens) > 1:
		return s.client
	case s.stateless:
		return "" // anonymous modern requests: one client together
	default:
		return "session:" + s.id
	}
}
