// Package config loads mcpgate's configuration: the JSON that MCP clients
// already use ("mcpServers", or VS Code's "servers") plus mcpgate's own
// sections. It is pure: bytes and an environment lookup in, a validated
// Config or every problem found out. It starts nothing and opens nothing.
package config

import (
	"time"
)

// Config is a validated configuration.
type Config struct {
	// Servers are the upstreams, in the order the file lists them. That order
	// is the order of every merged list.
	Servers []Server
	// Namespace is false only for a transparent proxy of exactly one server:
	// names then pass through unprefixed.
	Namespace bool
	Audit     Audit
	// CacheTTL bounds how long a fetched list is reused for an upstream that
	// promised list_changed notifications. Zero: DefaultCacheTTL.
	CacheTTL time.Duration
	// CacheOff turns the discovery cache off ("cache": false): no list or
	// initialize answer is kept between runs.
	CacheOff bool
	// CacheDir is where the discovery cache keeps its files; a relative
	// "cache_dir" is taken from the config file's directory. Empty: none
	// configured (the program fills in the user's cache directory; a
	// Gateway given none keeps no files).
	CacheDir string
	// StopGrace is how long each step of stopping an upstream waits: after
	// closing its stdin, and after SIGTERM. Zero: DefaultStopGrace.
	StopGrace time.Duration
	// MaxBackoff caps the wait between reconnection attempts. Zero:
	// DefaultMaxBackoff.
	MaxBackoff time.Duration
	// ShutdownGrace is how long requests in flight may finish once the
	// client has gone or a signal came. Zero: DefaultShutdownGrace.
	ShutdownGrace time.Duration
	// PageSize serves merged lists in pages of this many items. Zero: one
	// page with everything.
	PageSize int
	// MaxMessage limits one incoming message in bytes. Zero:
	// DefaultMaxMessage.
	MaxMessage int
	// HTTP configures serving clients over HTTP.
	HTTP HTTP
	// StartConcurrency bounds the upstreams being started (process started
	// or URL reached, and the handshake) at once. Zero:
	// DefaultStartConcurrency.
	StartConcurrency int
	// Cluster is set when this mcpgate is one of several replicas.
	Cluster Cluster
	// Policies apply to every server, in order; a server's own entries
	// replace these by name (see EffectivePolicies).
	Policies []Policy
	// Pin is how tool and prompt definitions are held to the lock file:
	// PinOff, PinOn (a changed or unknown definition is withheld) or
	// PinWarn (it is reported, not withheld). A server's own Pin wins.
	Pin string
	// LockPath is the lock file: "mcpgate.lock" beside the config unless
	// "pin": {"lock": "path"} says otherwise.
	LockPath string
	// Warnings are things worth telling the operator that do not stop a run
	// (an ignored key that looks like a typo of ours, a client-only key).
	Warnings []string
	// File and SHA256 name the config as Load read it: the audit trail
	// records which config was in force. Empty for a config built by hand.
	File, SHA256 string

	redactor *redactor // see Redact; nil: nothing to hide
}

// Server is one upstream MCP server.
type Server struct {
	Name    string
	Type    string // TypeStdio, TypeHTTP or TypeSSE
	Command string
	Args    []string
	Env     map[string]string // added to mcpgate's own environment
	Cwd     string
	URL     string
	Headers map[string]string
	Timeout time.Duration // per request, without progress; never zero after Load
	// MaxTimeout bounds a request that keeps reporting progress: each
	// progress notification moves its deadline back by Timeout, up to this.
	MaxTimeout time.Duration
	// InitTimeout bounds the initialize handshake.
	InitTimeout time.Duration
	Disabled    bool
	// Roots answer the server's roots/list when no client can: a request
	// that no client request caused, with several clients or none.
	Roots []Root
	// Isolation is IsolationShared (one instance serves every client) or
	// IsolationSession (one instance per client session, started on the
	// session's first request that needs it and stopped when it ends).
	Isolation string
	// MaxInstances bounds the instances of an IsolationSession server
	// running at once. IdleTimeout stops an instance unused that long (its
	// session's next request starts a new one). Both are set by Load.
	MaxInstances int
	IdleTimeout  time.Duration
	// MaxConcurrent bounds the requests in flight to the server at once;
	// the rest wait their turn, within their deadline. Zero: no limit.
	MaxConcurrent int
	// MaxQueued bounds the requests waiting for one of MaxConcurrent
	// places; one more is refused at once. Set by Load when MaxConcurrent
	// is (DefaultMaxQueued).
	MaxQueued int
	// Tools and Prompts say which of the server's tools and prompts clients
	// may see and call, named and described how. Zero: all, as they are.
	Tools   Filter
	Prompts Filter
	// Policies are the server's own entries (see Config.EffectivePolicies).
	Policies []Policy
	// Pin, when not empty, overrides the top level's for this server.
	Pin string
	// Protocol is the era mcpgate speaks to the server: ProtocolAuto (find
	// out when connecting, as the spec says), ProtocolModern (2026-07-28,
	// stateless) or ProtocolLegacy (initialize). Set by Load.
	Protocol string
}

// Protocol eras for Server.Protocol.
const (
	ProtocolAuto   = "auto"
	ProtocolModern = "modern"
	ProtocolLegacy = "legacy"
)

// Pin modes.
const (
	PinOff  = "off"
	PinOn   = "on"
	PinWarn = "warn"
)

// EffectivePin is how server s is held to the lock.
func (c *Config) EffectivePin(s Server) string {
	switch {
	case s.Pin != "":
		return s.Pin
	case c.Pin != "":
		return c.Pin
	}
	return PinOff
}

// Isolation modes.
const (
	IsolationShared  = "shared"
	IsolationSession = "session"
)

// Root is one filesystem root offered to a server (MCP "roots").
type Root struct {
	URI  string `json:"uri"`
	Name string `json:"name,omitempty"`
}

// HTTP configures the client-facing HTTP server.
type HTTP struct {
	// Listen is the address to serve on; empty: stdio. (-listen overrides.)
	Listen string
	// Path is where MCP is served. Empty: "/mcp".
	Path string
	// AllowedOrigins lists the Origin values accepted (scheme://host[:port]).
	// Nil: only loopback origins (localhost, 127.0.0.1, [::1]), any port.
	AllowedOrigins []string
	// AllowedHosts lists the Host header values accepted, with or without
	// a port. Nil: loopback names and the listen address.
	AllowedHosts []string
	// SessionIdle is how long a session may go unused before it expires.
	// Zero: DefaultSessionIdle.
	SessionIdle time.Duration
	// Tokens are the bearer tokens accepted; empty: no authentication,
	// which is refused on a non-loopback address.
	Tokens []string
	// MaxSessions bounds the sessions open at once; a new one past it gets
	// 503. Zero: DefaultMaxSessions.
	MaxSessions int
}

// HTTP defaults.
const (
	DefaultSessionIdle = 30 * time.Minute
	DefaultMaxSessions = 1000
)

// Audit configures the audit trail.
type Audit struct {
	Path          string // empty: no audit trail
	IncludeBodies bool
	// MaxBytes and MaxAge rotate the file: the next record after it
	// reached either goes to a new file. Zero: no limit.
	MaxBytes int64
	MaxAge   time.Duration
	// Sync is SyncAlways, SyncBatch or SyncNone. Empty: SyncBatch.
	Sync string
	// Replica, in a cluster, names the replica in the file's headers; Path
	// is then that replica's file (see ReplicaFile).
	Replica string
}

// Audit sync modes: when records are flushed to the disk (fsync). Every
// mode writes a record to the file before the response leaves.
const (
	SyncAlways = "always" // before the response leaves
	SyncBatch  = "batch"  // at most every 100 ms, off the request path
	SyncNone   = "none"   // when the operating system chooses
)

// MinAuditMaxBytes is the least audit.max_bytes: a smaller file could not
// hold a header and a record.
const MinAuditMaxBytes = 1024

// Transport types.
const (
	TypeStdio = "stdio"
	TypeHTTP  = "http"
	TypeSSE   = "sse"
)

// Defaults.
const (
	DefaultTimeout       = 60 * time.Second
	DefaultCacheTTL      = 10 * time.Minute
	DefaultShutdownGrace = 5 * time.Second
	DefaultStopGrace     = 2 * time.Second
	DefaultMaxBackoff    = 5 * time.Minute
	DefaultInitTimeout   = 60 * time.Second
	// DefaultMaxTimeout is the least max_timeout; a longer timeout raises it.
	DefaultMaxTimeout   = 5 * time.Minute
	DefaultMaxInstances = 100
	// DefaultStartConcurrency: enough to start a typical config (ten or so
	// servers) at once, with room to spare,
	// few enough that fifty npx servers do not start together.
	DefaultStartConcurrency = 16
	DefaultMaxQueued        = 100
	DefaultIdleTimeout      = 30 * time.Minute
)

// DefaultMaxMessage is the default limit on one message: 16 MiB, what the
// Go SDK accepts (the TypeScript SDK stops at 10 MiB per message).
const DefaultMaxMessage = 16 << 20

// DefaultPath is where MCP is served over HTTP by default.
const DefaultPath = "/mcp"

// SetDefaults fills every setting left at its zero value with its default,
// so that whoever reads the config reads the value that applies. Load calls
// it; a Config built by hand gets it from proxy.New.
func (c *Config) SetDefaults() {
	for _, d := range []struct {
		v   *time.Duration
		def time.Duration
	}{
		{&c.CacheTTL, DefaultCacheTTL},
		{&c.StopGrace, DefaultStopGrace},
		{&c.MaxBackoff, DefaultMaxBackoff},
		{&c.ShutdownGrace, DefaultShutdownGrace},
		{&c.HTTP.SessionIdle, DefaultSessionIdle},
	} {
		if *d.v <= 0 {
			*d.v = d.def
		}
	}
	if c.MaxMessage <= 0 {
		c.MaxMessage = DefaultMaxMessage
	}
	if c.HTTP.Path == "" {
		c.HTTP.Path = DefaultPath
	}
	if c.StartConcurrency <= 0 {
		c.StartConcurrency = DefaultStartConcurrency
	}
	if c.HTTP.MaxSessions <= 0 {
		c.HTTP.MaxSessions = DefaultMaxSessions
	}
	if c.Audit.Sync == "" {
		c.Audit.Sync = SyncBatch
	}
	for i := range c.Servers {
		c.Servers[i].setDefaults()
	}
}

func (s *Server) setDefaults() {
	if s.Timeout <= 0 {
		s.Timeout = DefaultTimeout
	}
	if s.MaxTimeout <= 0 {
		s.MaxTimeout = max(s.Timeout, DefaultMaxTimeout)
	}
	if s.InitTimeout <= 0 {
		s.InitTimeout = DefaultInitTimeout
	}
	if s.Isolation == "" {
		s.Isolation = IsolationShared
	}
	if s.Protocol == "" {
		s.Protocol = ProtocolAuto
	}
	if s.MaxInstances <= 0 {
		s.MaxInstances = DefaultMaxInstances
	}
	if s.IdleTimeout <= 0 {
		s.IdleTimeout = DefaultIdleTimeout
	}
	if s.MaxConcurrent > 0 && s.MaxQueued <= 0 {
		s.MaxQueued = DefaultMaxQueued
	}
}

// Enabled returns the servers that are not disabled, in config order.
func (c *Config) Enabled() []Server {
	var out []Server
	for _, s := range c.Servers {
		if !s.Disabled {
			out = append(out, s)
		}
	}
	return out
}
