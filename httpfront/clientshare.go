package httpfront

import "fmt"

// With several tokens, each is a client of its own, and one of them
// opening every session max_sessions allows would have every other
// refused: a token may hold at most a quarter of them (as a client may of
// the gateway's listens and calls held for input). One token shared by
// all tells no client apart, so the share applies only with several.

// tooManySessionsOf refuses a new session of client past its share. f.mu held.
func (f *Front) tooManySessionsOf(client string) error {
	if !f.sharesApply(client) {
		return nil
	}
	share := clientShare(f.cfg.MaxSessions)
	held := 0
	for _, hs := range f.sessions {
		if hs.client == client {
			held++
		}
	}
	if held < share {
		return nil
	}
	return fmt.Errorf("this client has %d sessions open, the most mcpgate keeps for one client (of max_sessions %d); end one (DELETE) or let it expire first", held, f.cfg.MaxSessions)
}

// sharesApply reports whether client is held to its share of what all
// clients share: only when tokens tell clients apart.
func (f *Front) sharesApply(client string) bool {
	return client != "" && len(f.cfg.Tokens) >= 2
}

// clientShare is one client's share of a bound of n for all clients.
func clientShare(n int) int { return max(1, n/4) }
