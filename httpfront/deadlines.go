package httpfront

import (
	"net/http"
	"time"
)

// A request's deadlines are set a few times each (ServeHTTP, readBody,
// each answer): through net/http's own ResponseWriter directly, as
// http.ResponseController would find it, without allocating a controller
// each time. A wrapped writer goes through a controller, which unwraps it.

func setWriteDeadline(w http.ResponseWriter, deadline time.Time) error {
	if d, ok := w.(interface{ SetWriteDeadline(time.Time) error }); ok {
		return d.SetWriteDeadline(deadline)
	}
	return http.NewResponseController(w).SetWriteDeadline(deadline)
}

func setReadDeadline(w http.ResponseWriter, deadline time.Time) error {
	if d, ok := w.(interface{ SetReadDeadline(time.Time) error }); ok {
		return d.SetReadDeadline(deadline)
	}
	return http.NewResponseController(w).SetReadDeadline(deadline)
}
