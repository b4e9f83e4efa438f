package proxy

// testHookClientLeft, if not nil, runs in Serve as soon as the client's
// side has ended, before the session fails what is still in flight: a test
// holds the session's end there to force the interleaving it checks.
var testHookClientLeft func()

// endedByClient reports whether the client has ended the session itself
// (over HTTP, with DELETE). The transport says so before it ends the
// session's stream, so before the session's end fails the requests it
// relayed to the client: a call waiting on one, whose server answers at
// once from that failure, is concluded after the client's end is known,
// and gets the DELETE error like every call in flight, whichever goroutine
// gets there first (Serve cancelling the handlers, or the server's answer).
func (s *session) endedByClient() bool {
	return s.deleted.Load() || s.ended != nil && s.ended()
}
