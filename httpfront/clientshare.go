package httpfront

import "fmt"

// With several tokens, each is a client of its own, and one of them
// opening every session max_sessions allows would have every other
// refused: a token may hold at most a quarter of them (as a client may of
// the gateway's listens and calls held for input). One token shared by
// all tells no client apart, so the share applies only with several.

// tooManySessionsOf refuses a new session of client past its share. f.mu held.
func (f *Front) tooManySessionsOf(client string) error {
	if client == "" || len(f.cfg.Tokens) < 2 {
		return nil
	}
	share := max(1, f.cfg.MaxSessions/4)
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
