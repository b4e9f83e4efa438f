package proxy

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mcpgate/mcpgate/config"
)

// An HTTP error's body is quoted up to 512 bytes. A secret the server
// echoed across that limit is cut in two, and its start is hidden too.
func TestHTTPErrorBodyCutHidesSecret(t *testing.T) {
	secret := "tok/en<1>"
	body := strings.Repeat("x", 504) + secret + " and more" // the cut leaves 8 of its 9 bytes
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, body, http.StatusBadGateway)
	}))
	t.Cleanup(ts.Close)
	cfg, err := config.Load([]byte(`{"mcpServers": {"remote": {"url": "`+ts.URL+`", "headers": {"X-Token": "${TOKEN}"}}}}`), "c.json",
		func(k string) (string, bool) { return secret, k == "TOKEN" })
	if err != nil {
		t.Fatal(err)
	}
	l := testLink(t, cfg.Enabled()[0])
	l.redactCut = cfg.RedactCut
	got := initializeLink(t, l)
	if want := fmt.Sprintf(`HTTP 502 Bad Gateway: %s${TOKEN}…"`, strings.Repeat("x", 504)); !strings.Contains(got, want) || strings.Contains(got, "tok/en") {
		t.Errorf("answer %s\nwant it to end the body with %s", got, want)
	}
}
