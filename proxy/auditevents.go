package proxy

import (
	"os"
	"time"
)

// The audit trail's records of what is not a client's request: the config
// in force, sessions, upstream connections. Each is an event (see
// auditLog.event); a request's record says which session and server it
// concerned, and these say when those came and went.

// recordConfig records the config the gateway runs with, at start.
func (g *Gateway) recordConfig() {
	servers := []string{}
	for _, u := range g.live().upstreams {
		servers = append(servers, u.name)
	}
	attrs := []any{"version", g.version, "pid", os.Getpid(), "servers", servers}
	if g.live().cfg.File != "" {
		attrs = append(attrs, "config", g.live().cfg.File, "config_sha256", g.live().cfg.SHA256)
	}
	if g.probe {
		attrs = append(attrs, "probe", true) // mcpgate check or tools, not serving
	}
	g.audit.event("config_loaded", attrs...)
}

// recordClosed records the end of a session, with the client it served.
func (s *session) recordClosed(opened time.Time) {
	s.mu.Lock()
	client := s.clientInfo
	s.mu.Unlock()
	attrs := []any{"session", s.id, "duration_ms", float64(time.Since(opened).Microseconds()) / 1000}
	if client.Name != "" {
		attrs = append(attrs, "client", client.Name, "client_version", client.Version)
	}
	s.g.audit.event("session_closed", attrs...)
}

// recordConnected records a connection made: upstream_connected the first
// time, upstream_restarted after that.
func (u *upstream) recordConnected() {
	u.mu.Lock()
	init, restarts := u.init, u.restarts
	u.mu.Unlock()
	kind, attrs := "upstream_connected", []any{}
	if restarts > 0 {
		kind, attrs = "upstream_restarted", []any{"restarts", restarts}
	}
	u.recordEvent(kind, append(attrs, "protocol", init.ProtocolVersion, "upstream_name", init.ServerInfo.Name, "upstream_version", init.ServerInfo.Version)...)
}

// recordEvent records an event of this upstream's: named by its server,
// and, for an instance of an isolated server, by the session it serves.
func (u *upstream) recordEvent(kind string, attrs ...any) {
	head := []any{"server", u.name}
	if u.owner != nil {
		head = append(head, "session", u.owner.id)
	}
	u.g.audit.event(kind, append(head, attrs...)...)
}
