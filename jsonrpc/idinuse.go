package jsonrpc

import "fmt"

// ErrIDInUse is the refusal of a request whose id a request of the same
// peer still in flight has (JSON-RPC leaves it undefined; MCP: an id MUST
// NOT be reused within a session). One error, wherever it is found: by a
// Conn, or by a transport that routes answers by id.
func ErrIDInUse(id ID) error {
	return fmt.Errorf("%w: request id %s is already in use by a request in flight", ErrInvalidRequest, id)
}
