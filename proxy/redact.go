package proxy

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"reflect"

	"github.com/mcpgate/mcpgate/internal/rawjson"

	"github.com/mcpgate/mcpgate/jsonrpc"
)

// Values from the environment (${VAR} in the config) are often secrets: a
// token in a URL path, a key in a header, a path with a user name in it.
// They reach the text mcpgate writes through errors (net/http echoes URLs,
// os/exec echoes commands, servers echo what they were given), so every
// exit is filtered: errors sent to clients, log lines, the upstreams'
// relayed stderr, the audit trail, operator views. Results and
// notifications from servers pass through unchanged: they are the
// servers' answers, and mcpgate does not rewrite them.

// redactingHandler is a slog.Handler that redacts the message and every
// attribute before passing the record on.
type redactingHandler struct {
	next   slog.Handler
	redact func(string) string
}

func (h *redactingHandler) Enabled(ctx context.Context, l slog.Level) bool {
	return h.next.Enabled(ctx, l)
}

func (h *redactingHandler) Handle(ctx context.Context, r slog.Record) error {
	out := slog.NewRecord(r.Time, r.Level, h.redact(r.Message), r.PC)
	r.Attrs(func(a slog.Attr) bool {
		out.AddAttrs(h.redactAttr(a))
		return true
	})
	return h.next.Handle(ctx, out)
}

func (h *redactingHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	red := make([]slog.Attr, len(attrs))
	for i, a := range attrs {
		red[i] = h.redactAttr(a)
	}
	return &redactingHandler{next: h.next.WithAttrs(red), redact: h.redact}
}

func (h *redactingHandler) WithGroup(name string) slog.Handler {
	return &redactingHandler{next: h.next.WithGroup(name), redact: h.redact}
}

func (h *redactingHandler) redactAttr(a slog.Attr) slog.Attr {
	v := a.Value.Resolve()
	switch v.Kind() {
	case slog.KindString:
		return slog.String(a.Key, h.redact(v.String()))
	case slog.KindGroup:
		group := v.Group()
		red := make([]any, len(group))
		for i, g := range group {
			red[i] = h.redactAttr(g)
		}
		return slog.Group(a.Key, red...)
	case slog.KindAny:
		if b, ok := byteSlice(v.Any()); ok {
			return redactBytesAttr(a.Key, v, b, h.redact)
		}
		// errors, panics, anything printed with fmt: redact what it prints
		s := fmt.Sprint(v.Any())
		if r := h.redact(s); r != s {
			return slog.String(a.Key, r)
		}
	}
	return slog.Attr{Key: a.Key, Value: v}
}

// redactBytesAttr redacts bytes as the text they hold: that is how the
// text handler prints them (fmt.Sprint would show numbers, and hide the
// value from redact), and the JSON handler too for json.RawMessage. Often
// the text is JSON, with a value perhaps escaped: its strings are redacted
// as such. A json.RawMessage stays JSON.
func redactBytesAttr(key string, v slog.Value, b []byte, redact func(string) string) slog.Attr {
	s := redact(string(redactJSON(b, redact)))
	if s == string(b) {
		return slog.Attr{Key: key, Value: v}
	}
	if _, raw := v.Any().(json.RawMessage); raw && json.Valid([]byte(s)) {
		return slog.Any(key, json.RawMessage(s))
	}
	return slog.String(key, s)
}

// byteSlice reports whether a is a slice of bytes, named or not, as slog's
// handlers tell (they print such a value as a string).
func byteSlice(a any) ([]byte, bool) {
	if b, ok := a.([]byte); ok {
		return b, true
	}
	if t := reflect.TypeOf(a); t != nil && t.Kind() == reflect.Slice && t.Elem().Kind() == reflect.Uint8 {
		return reflect.ValueOf(a).Bytes(), true
	}
	return nil, false
}

// redactJSON applies redact to every string in a JSON text (keys too),
// leaving the rest as it is: the text stays valid JSON, and a value is
// found whether it was written plainly or with escapes.
func redactJSON(b []byte, redact func(string) string) []byte {
	var out []byte // nil until something changes
	done := 0      // b[:done] is in out
	for i := 0; i < len(b); i++ {
		if b[i] != '"' {
			continue
		}
		end, escaped := i+1, false
		for end < len(b) && b[end] != '"' {
			if b[end] == '\\' {
				escaped = true
				end++
			}
			end++
		}
		if end >= len(b) {
			break // not valid JSON; nothing more to find
		}
		var s string
		if escaped {
			if json.Unmarshal(b[i:end+1], &s) != nil {
				i = end
				continue
			}
		} else {
			s = string(b[i+1 : end])
		}
		if r := redact(s); r != s {
			out = append(out, b[done:i]...)
			out = rawjson.AppendString(out, r)
			done = end + 1
		}
		i = end
	}
	if out == nil {
		return b
	}
	return append(out, b[done:]...)
}

// redactError is err as sent to a client, redacted: its message and data.
func redactError(err error, redact func(string) string) *jsonrpc.Error {
	we := jsonrpc.ToWire(err)
	return &jsonrpc.Error{Code: we.Code, Message: redact(we.Message), Data: redactJSON(we.Data, redact)}
}
