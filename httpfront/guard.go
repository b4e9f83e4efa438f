package httpfront

import (
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"

	"github.com/mcpgate/mcpgate/config"
)

// guard checks what every MCP request must pass: the Host (DNS
// rebinding), the Origin, and the bearer token.
func (f *Front) guard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if f.admitted(w, r) {
			next.ServeHTTP(w, r)
		}
	})
}

// admitted is guard's check: false when the request is refused, and
// answered so.
func (f *Front) admitted(w http.ResponseWriter, r *http.Request) bool {
	if !f.originAdmitted(w, r) {
		return false
	}
	if len(f.cfg.Tokens) > 0 && !f.tokenValid(header(r.Header, headerAuthorization)) {
		w.Header().Set("WWW-Authenticate", `Bearer realm="mcpgate"`)
		http.Error(w, "a valid bearer token is required", http.StatusUnauthorized)
		return false
	}
	return true
}

// checkOrigin checks the Host (DNS rebinding) and the Origin: what every
// request must pass, with a token or without.
func (f *Front) checkOrigin(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if f.originAdmitted(w, r) {
			next.ServeHTTP(w, r)
		}
	})
}

// originAdmitted is checkOrigin's check: false when the request is
// refused, and answered so.
func (f *Front) originAdmitted(w http.ResponseWriter, r *http.Request) bool {
	if !f.hostAllowed(r.Host) {
		http.Error(w, fmt.Sprintf("Host %q is not allowed (see allowed_hosts)", r.Host), http.StatusForbidden)
		return false
	}
	if o := header(r.Header, headerOrigin); o != "" && !f.originAllowed(o) {
		http.Error(w, fmt.Sprintf("Origin %q is not allowed (see allowed_origins)", o), http.StatusForbidden)
		return false
	}
	return true
}

// tokenValid checks an Authorization header (see BearerValid).
func (f *Front) tokenValid(header string) bool { return BearerValid(f.cfg.Tokens, header) }

// CheckListen refuses what the front must not serve: an address beyond
// loopback without a bearer token (anyone who can reach it could use every
// upstream), or one that is not host:port. The error says how to fix it.
func CheckListen(cfg config.HTTP) error {
	host, _, err := net.SplitHostPort(cfg.Listen)
	if err != nil {
		return fmt.Errorf("-listen %q: %v (write it like 127.0.0.1:8931)", cfg.Listen, err)
	}
	if !isLoopbackHost(host) && len(cfg.Tokens) == 0 {
		return fmt.Errorf("refusing to listen on %s without a bearer token: anyone who can reach it could use every upstream.\n"+
			"Add to the config: \"auth\": {\"tokens\": [\"${MCPGATE_TOKEN}\"]}, and set MCPGATE_TOKEN (for example to the output of: openssl rand -hex 32).\n"+
			"Or listen on a loopback address such as 127.0.0.1:8931.", cfg.Listen)
	}
	return nil
}

// isLoopbackHost reports whether host names this machine. Host names are
// case-insensitive (RFC 4343): LOCALHOST is localhost.
func isLoopbackHost(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(strings.Trim(host, "[]"))
	return ip != nil && ip.IsLoopback()
}

func splitHost(hostport string) string {
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		return h
	}
	return hostport
}

func (f *Front) hostAllowed(host string) bool {
	if last := f.allowedHost.Load(); last != nil && *last == host {
		return true
	}
	if !f.hostAllowedByConfig(host) {
		return false
	}
	f.rememberAllowedHost(host)
	return true
}

// rememberAllowedHost is apart from hostAllowed so that only a Host found
// allowed anew is moved to the heap: taking the parameter's address there
// cost every request an allocation, the remembered Host's too. Inlined,
// it would put the move back at hostAllowed's start.
//
//go:noinline
func (f *Front) rememberAllowedHost(host string) {
	f.allowedHost.Store(&host)
}

func (f *Front) hostAllowedByConfig(host string) bool {
	if f.cfg.AllowedHosts == nil {
		h := splitHost(host)
		return isLoopbackHost(h) || strings.EqualFold(h, splitHost(f.addr)) && h != ""
	}
	for _, a := range f.cfg.AllowedHosts {
		if strings.EqualFold(a, host) || strings.EqualFold(a, splitHost(host)) {
			return true
		}
	}
	return false
}

func (f *Front) originAllowed(origin string) bool {
	if f.cfg.AllowedOrigins == nil {
		u, err := url.Parse(origin)
		return err == nil && isLoopbackHost(u.Hostname())
	}
	for _, a := range f.cfg.AllowedOrigins {
		if strings.EqualFold(strings.TrimSuffix(a, "/"), origin) {
			return true
		}
	}
	return false
}
