package proxy

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"testing"
)

func redactTok(s string) string { return strings.ReplaceAll(s, "tok/en<1>", "${TOKEN}") }

func TestRedactJSON(t *testing.T) {
	tests := []struct{ in, want string }{
		{`{"a":"tok/en<1>"}`, `{"a":"${TOKEN}"}`},
		// escaped as servers and encoding/json may write it
		{`{"a":"tok\/en\u003c1\u003e and more"}`, `{"a":"${TOKEN} and more"}`},
		{`{"tok/en<1>":[1,"x","tok/en<1>"]}`, `{"${TOKEN}":[1,"x","${TOKEN}"]}`},
		{`{"a":"say \"tok/en<1>\""}`, `{"a":"say \"${TOKEN}\""}`},
		{`{"n":12345,"s":"nothing here \"quoted\""}`, `{"n":12345,"s":"nothing here \"quoted\""}`},
		{`{"a":"tok/en<1>","b":"unterminated`, `{"a":"${TOKEN}","b":"unterminated`},
	}
	for _, tt := range tests {
		got := string(redactJSON([]byte(tt.in), redactTok))
		if got != tt.want {
			t.Errorf("redactJSON(%s) = %s, want %s", tt.in, got, tt.want)
		}
		if json.Valid([]byte(tt.in)) && !json.Valid([]byte(got)) {
			t.Errorf("redactJSON(%s) = %s: no longer valid JSON", tt.in, got)
		}
	}
}

func TestRedactingHandler(t *testing.T) {
	for _, format := range []string{"text", "json"} {
		var buf bytes.Buffer
		var h slog.Handler = slog.NewTextHandler(&buf, nil)
		if format == "json" {
			h = slog.NewJSONHandler(&buf, nil)
		}
		log := slog.New(&redactingHandler{next: h, redact: redactTok})
		log.With("url", "https://x/tok/en<1>/mcp").WithGroup("g").Info("cannot start tok/en<1>",
			"err", errors.New("open tok/en<1>: denied"),
			"n", 42,
			slog.Group("inner", "v", "tok/en<1>"),
			"panic", []string{"tok/en<1>"})
		out := buf.String()
		if strings.Contains(out, "tok/en") || strings.Contains(out, `tok\/en`) {
			t.Errorf("%s: the value is logged:\n%s", format, out)
		}
		if n := strings.Count(out, "${TOKEN}"); n != 5 {
			t.Errorf("%s: ${TOKEN} appears %d times, want 5:\n%s", format, n, out)
		}
		if !strings.Contains(out, "42") {
			t.Errorf("%s: other attributes are lost:\n%s", format, out)
		}
	}
}

// Bytes are logged as the text they hold (the text handler prints them as
// a string, the JSON handler as base64 or, for json.RawMessage, as JSON),
// so they are redacted as text.
func TestRedactingHandlerBytes(t *testing.T) {
	secretBytes := []byte(`{"token":"tok/en<1>"}`)
	for _, format := range []string{"text", "json"} {
		var buf bytes.Buffer
		var h slog.Handler = slog.NewTextHandler(&buf, nil)
		if format == "json" {
			h = slog.NewJSONHandler(&buf, nil)
		}
		log := slog.New(&redactingHandler{next: h, redact: redactTok})
		log.Warn("bad answer", "body", secretBytes, "raw", json.RawMessage(secretBytes), "clean", []byte("nothing secret"))
		out := buf.String()
		if strings.Contains(out, "tok/en") || strings.Contains(out, `tok\/en`) || strings.Contains(out, base64.StdEncoding.EncodeToString(secretBytes)) {
			t.Errorf("%s: the value is logged:\n%s", format, out)
		}
		if n := strings.Count(out, "${TOKEN}"); n != 2 {
			t.Errorf("%s: ${TOKEN} appears %d times, want 2:\n%s", format, n, out)
		}
		if format == "text" && !strings.Contains(out, `clean="nothing secret"`) {
			t.Errorf("%s: bytes without a secret are not logged as they were:\n%s", format, out)
		}
	}
}
