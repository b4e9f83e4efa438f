package proxy

// A modern client's call to a legacy server is made as an exchange (see
// bridgeask.go) so that the server's request for input can reach the
// client as input_required. A server's request reaches the exchange only
// for a capability the client declared (askModernClient): a client that
// declared none of them (most do: "clientCapabilities": {}) can never be
// asked, and its call is made as a plain one, with none of the
// exchange's goroutine, channels, context and id.

// mayBeAsked reports whether a server's request could reach the client of
// this envelope through an exchange: it declared a capability that some
// server request needs.
func (e *envelope) mayBeAsked() bool {
	if len(e.caps) == 0 {
		return false
	}
	for _, m := range serverMethods {
		if _, ok := e.caps[m.capability]; ok && m.capability != "" {
			return true
		}
	}
	return false
}
