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
	// (502 is retried: the note after the body says so.)
	if want := fmt.Sprintf(`HTTP 502 Bad Gateway: %s${TOKEN}… (after 4 attempts)"`, strings.Repeat("x", 504)); !strings.Contains(got, want) || strings.Contains(got, "tok/en") {
		t.Errorf("answer %s\nwant it to end the body with %s", got, want)
	}
}

// A server over HTTP may answer with pretty-printed JSON, in a body or an
// event's data lines; what mcpgate passes on is one line, as a stdio client
// reads messages (a line break in it would cut the message in two, and the
// rest would be read as a message of its own).
func TestHTTPAnswerIsOneLine(t *testing.T) {
	pretty := "{\n  \"jsonrpc\": \"2.0\",\n  \"id\": 1,\n  \"result\": {\r\n    \"protocolVersion\": \"2025-11-25\",\n    \"text\": \"two\\nlines\"\n  }\n}\n"
	for _, sse := range []bool{false, true} {
		ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method != http.MethodPost {
				http.Error(w, "no stream", http.StatusMethodNotAllowed)
				return
			}
			if !sse {
				w.Header().Set("Content-Type", "application/json")
				fmt.Fprint(w, pretty)
				return
			}
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprint(w, "event: message\n")
			for _, line := range strings.Split(strings.TrimSuffix(pretty, "\n"), "\n") {
				fmt.Fprintf(w, "data: %s\n", strings.TrimSuffix(line, "\r"))
			}
			fmt.Fprint(w, "\n")
		}))
		l := testLink(t, config.Server{Name: "remote", URL: ts.URL, Type: config.TypeHTTP})
		got := initializeLink(t, l)
		if strings.ContainsAny(got, "\r\n") || !strings.Contains(got, `"text": "two\nlines"`) && !strings.Contains(got, `"text":"two\nlines"`) {
			t.Errorf("sse=%v: passed on %q, want one line, the string's escape kept", sse, got)
		}
		ts.Close()
	}
}

// The probe of a server's era goes as a modern request; a server found to
// be legacy must still have its requests wait for its GET stream, where
// it sends what it ties to no request (see awaitStream).
func TestProbeLeavesTheStreamGateShut(t *testing.T) {
	l := testLink(t, config.Server{Name: "remote", URL: "http://127.0.0.1:1", Type: config.TypeHTTP})
	l.setModern(true)
	l.setModern(false)
	select {
	case <-l.streamUp:
		t.Fatal("after the probe, requests no longer wait for the GET stream")
	default:
	}
}
