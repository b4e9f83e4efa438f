package proxy

import "github.com/mcpgate/mcpgate/jsonrpc"

// decodedOutbox is a session's outbox over a client stream that decodes
// what it reads (the HTTP front decodes each POST to route it): the
// session's connection reads the messages as they were decoded. The outbox
// alone would hide ReadMessage, and every message would be encoded again
// only to be decoded a second time.
type decodedOutbox struct {
	*outbox
	client jsonrpc.MessageReader
}

func (d decodedOutbox) ReadMessage() (*jsonrpc.Message, []byte, error) {
	return d.client.ReadMessage()
}

// clientStream is what a session's connection reads and writes: its outbox,
// passing on the client stream's decoded messages when it has them.
func clientStream(out *outbox, client jsonrpc.Stream) jsonrpc.Stream {
	if mr, ok := client.(jsonrpc.MessageReader); ok {
		return decodedOutbox{out, mr}
	}
	return out
}

// ServeDirect passes the connection's serve function on to a client stream
// that serves what it reads on goroutines of its own (see
// jsonrpc.DirectStream): the outbox would hide it too.
func (d decodedOutbox) ServeDirect(serve func(msg *jsonrpc.Message, raw []byte, here bool) (job func())) {
	if ds, ok := d.client.(jsonrpc.DirectStream); ok {
		ds.ServeDirect(serve)
	}
}
