package httpfront

import "fmt"

// The modern requests in flight are bounded for all clients together
// (maxStatelessRequests): with several tokens, one of them could take
// every place and have every other client refused. So a token may have at
// most a quarter of them in flight, as it may hold of the sessions (see
// tooManySessionsOf). One token shared by all, or none, tells no client
// apart: their requests share the whole bound.

// tooManyStatelessOf refuses a modern request of client past its share. f.mu held.
func (f *Front) tooManyStatelessOf(client string) error {
	if !f.sharesApply(client) {
		return nil
	}
	if held, share := f.statelessOf[client], clientShare(f.maxStateless); held >= share {
		return fmt.Errorf("this client has %d requests in flight, the most mcpgate serves at once for one client (of %d for all); wait for some to be answered first", held, f.maxStateless)
	}
	return nil
}

// countStateless adds delta to client's modern requests in flight. f.mu held.
func (f *Front) countStateless(client string, delta int) {
	if !f.sharesApply(client) {
		return
	}
	if f.statelessOf == nil {
		f.statelessOf = map[string]int{}
	}
	if f.statelessOf[client] += delta; f.statelessOf[client] <= 0 {
		delete(f.statelessOf, client)
	}
}
