package jsonrpc

import (
	"errors"
	"fmt"
)

// writeFailed reports a write that failed. Once the peer is gone, every
// answer still to go fails alike (a client that left with a thousand
// requests in flight): that is reported once per connection, not once per
// answer, so that a client leaving cannot fill the log.
func (c *Conn) writeFailed(err error) {
	if errors.Is(err, ErrClosed) && c.closedWriteReported.Swap(true) {
		return
	}
	c.badInput(fmt.Errorf("write: %w", err))
}
