package httpfront

import (
	"context"
	"net"
	"net/http"
)

// The listener that holds the front's connections (mcpgate's connLimit)
// closes, at its limit, a connection that stalls, to make a place: one
// trickling its headers, and one whose request body stopped coming. To
// net/http both a body being read and a request being served (a slow tool
// call, an event stream) are an active request; the front tells the
// connection which it is.

// BodyReader is a connection told while a request's body is read on it.
type BodyReader interface{ ReadingBody(reading bool) }

type bodyReaderKey struct{}

// ConnContext is the http.Server's ConnContext for the front: a
// connection that is a BodyReader is told, while a body is read on it.
func ConnContext(ctx context.Context, c net.Conn) context.Context {
	if br, ok := c.(BodyReader); ok {
		return context.WithValue(ctx, bodyReaderKey{}, br)
	}
	return ctx
}

// bodyReaderOf is r's connection, if it is to be told (nil if not).
func bodyReaderOf(r *http.Request) BodyReader {
	br, _ := r.Context().Value(bodyReaderKey{}).(BodyReader)
	return br
}
