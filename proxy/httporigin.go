package proxy

import (
	"errors"
	"net/http"
	"net/url"
	"strings"
)

// The headers configured for a server (API keys, bearer tokens) go to that
// server's origin only: scheme, host and port of its url. net/http strips
// only Authorization and cookies on a redirect to another host, and keeps
// them across a change of scheme or port; a custom header such as
// X-Api-Key it forwards anywhere. A legacy HTTP+SSE server's POST endpoint
// on another origin is refused outright (runLegacyStream), as the
// TypeScript SDK does.

// maxRedirects is net/http's own limit, kept since a CheckRedirect
// replaces it.
const maxRedirects = 10

// checkRedirect follows a redirect, without the configured headers when it
// leads to another origin than the configured url's.
func (l *httpLink) checkRedirect(req *http.Request, via []*http.Request) error {
	if len(via) >= maxRedirects {
		return errors.New("stopped after 10 redirects")
	}
	home, err := url.Parse(l.url)
	if err != nil || !sameOrigin(req.URL, home) {
		for k := range l.headers {
			req.Header.Del(k)
		}
	}
	return nil
}

// sameOrigin reports whether two URLs share scheme, host and port, a
// missing port being the scheme's default.
func sameOrigin(a, b *url.URL) bool {
	return origin(a) == origin(b)
}

// origin is a URL's scheme://host:port, lower case, with the default port
// made explicit.
func origin(u *url.URL) string {
	scheme := strings.ToLower(u.Scheme)
	port := u.Port()
	if port == "" {
		switch scheme {
		case "http":
			port = "80"
		case "https":
			port = "443"
		}
	}
	host := strings.ToLower(u.Hostname())
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	return scheme + "://" + host + ":" + port
}
