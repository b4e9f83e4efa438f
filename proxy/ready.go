package proxy

import (
	"encoding/json"
	"net/http"
)

// Drain marks the gateway as going away: Draining reports it, and /readyz
// fails from then on (on the HTTP front and the -metrics listener), so that
// a load balancer sends new work elsewhere while requests in flight finish.
// It changes nothing else: the caller decides when to stop serving.
func (g *Gateway) Drain() { g.draining.Store(true) }

// Draining reports whether Drain was called.
func (g *Gateway) Draining() bool { return g.draining.Load() }

// ReadinessHandler serves /readyz for a listener of the operator's (the
// -metrics one): 200 when at least one server is connected (or runs per
// session, started on demand) and the gateway is not draining, 503
// otherwise; the body says which servers are connected, without reasons,
// and in a cluster which replica this is.
func (g *Gateway) ReadinessHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		type server struct {
			Name      string `json:"name"`
			Connected bool   `json:"connected"`
		}
		var out struct {
			Ready    bool     `json:"ready"`
			Replica  string   `json:"replica,omitempty"` // in a cluster: which one answered
			Draining bool     `json:"draining,omitempty"`
			Audit    string   `json:"audit,omitempty"`
			Servers  []server `json:"servers"`
		}
		out.Replica = g.live().cfg.Cluster.Replica
		out.Audit = g.AuditState()
		for _, st := range g.Statuses() {
			out.Ready = out.Ready || st.Connected || st.Isolated
			out.Servers = append(out.Servers, server{st.Name, st.Connected})
		}
		if g.Draining() {
			out.Ready, out.Draining = false, true
		}
		w.Header().Set("Content-Type", "application/json")
		if !out.Ready {
			w.WriteHeader(http.StatusServiceUnavailable)
		}
		json.NewEncoder(w).Encode(out)
	})
}
