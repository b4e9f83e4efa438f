package main

import (
	"net/http"
	"testing"
)

// The -metrics server closes what a client leaves open: a keep-alive left
// idle after a scrape stayed open for as long as mcpgate ran (probe 4: 50
// idle connections still open after 13 s, with ReadHeaderTimeout 10 s),
// and a client that stops reading /metrics held its handler.
func TestMetricsServerDeadlines(t *testing.T) {
	srv := metricsServer(http.NotFoundHandler())
	if srv.ReadHeaderTimeout <= 0 || srv.ReadTimeout <= 0 || srv.WriteTimeout <= 0 || srv.IdleTimeout <= 0 {
		t.Errorf("metrics server: ReadHeaderTimeout %v, ReadTimeout %v, WriteTimeout %v, IdleTimeout %v; each must be set (zero waits forever)",
			srv.ReadHeaderTimeout, srv.ReadTimeout, srv.WriteTimeout, srv.IdleTimeout)
	}
}
