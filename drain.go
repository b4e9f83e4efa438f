package main

import (
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/mcpgate/mcpgate/config"
	"github.com/mcpgate/mcpgate/proxy"
)

// drainHTTP is what mcpgate serving HTTP does first on SIGTERM or SIGINT,
// before the front lets requests in flight finish (serveHTTP): /readyz
// fails at once, so that a load balancer stops sending new work here.
//
// In a cluster, the replica then serves on for cluster.drain_delay, the
// time a balancer that polls /readyz takes to notice, and stops listening:
// a balancer's next connection is refused and goes to another replica,
// where a 503 from here would have gone to the client (a second signal
// ends the delay at once). Alone, mcpgate
// keeps listening: its clients may still have to answer what their calls
// in flight ask them, or cancel them, and are told 503 for anything new.
func drainHTTP(g *proxy.Gateway, cluster config.Cluster, ln net.Listener, log *slog.Logger) {
	g.Drain()
	if cluster.Replica == "" {
		return
	}
	if cluster.DrainDelay > 0 {
		// A second signal cuts the delay short: an operator who will not wait.
		again := make(chan os.Signal, 1)
		signal.Notify(again, os.Interrupt, syscall.SIGTERM)
		defer signal.Stop(again)
		log.Info("draining: /readyz fails; serving on for cluster.drain_delay", "drain_delay", cluster.DrainDelay)
		delay := time.NewTimer(cluster.DrainDelay)
		defer delay.Stop()
		select {
		case <-delay.C:
		case <-again:
		}
	}
	log.Info("draining: no longer listening; requests in flight finish within shutdown_grace")
	ln.Close()
}

// addProbes serves /healthz (the process is up) and /readyz (it takes new
// work: see Gateway.ReadinessHandler) on an operator's listener.
func addProbes(mux *http.ServeMux, g *proxy.Gateway) {
	mux.Handle("GET /healthz", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok\n") }))
	mux.Handle("GET /readyz", g.ReadinessHandler())
}
