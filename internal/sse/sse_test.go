package sse

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

type wantEvent struct{ typ, data, id string }

func readAll(t *testing.T, r io.Reader, max int) ([]wantEvent, []error) {
	t.Helper()
	sr := NewReader(r, max)
	var evs []wantEvent
	var errs []error
	for range 100 {
		ev, err := sr.Next()
		if err == io.EOF {
			return evs, errs
		}
		if err != nil {
			errs = append(errs, err)
			if !errors.Is(err, ErrEventTooLarge) {
				return evs, errs
			}
			continue
		}
		evs = append(evs, wantEvent{ev.Type, string(ev.Data), ev.ID})
	}
	t.Fatal("no end")
	return nil, nil
}

func TestSSEReader(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []wantEvent
	}{
		{"simple", "data: {\"a\":1}\n\n", []wantEvent{{"message", `{"a":1}`, ""}}},
		{"multi-line data", "data: one\ndata: two\n\n", []wantEvent{{"message", "one\ntwo", ""}}},
		{"CRLF and CR", "data: a\r\n\r\ndata: b\r\rdata:c\n\n", []wantEvent{{"message", "a", ""}, {"message", "b", ""}, {"message", "c", ""}}},
		{"event type, id, comment, retry", ": hello\nevent: endpoint\nid: 7\nretry: 3000\ndata: /messages?s=1\n\n", []wantEvent{{"endpoint", "/messages?s=1", "7"}}},
		{"id persists, NUL id ignored", "id: 1\ndata: x\n\nid: a\x00b\ndata: y\n\n", []wantEvent{{"message", "x", "1"}, {"message", "y", "1"}}},
		{"no space after colon, field without colon", "data:x\ndata\n\n", []wantEvent{{"message", "x\n", ""}}},
		{"empty event is not dispatched", "event: ping\n\ndata: z\n\n", []wantEvent{{"message", "z", ""}}},
		{"BOM", "\xEF\xBB\xBFdata: bom\n\n", []wantEvent{{"message", "bom", ""}}},
		{"cut off at the end", "data: whole\n\ndata: partial\n", []wantEvent{{"message", "whole", ""}}},
		{"unknown fields ignored", "foo: bar\ndata: q\n\n", []wantEvent{{"message", "q", ""}}},
	}
	for _, tt := range tests {
		for _, rd := range []struct {
			name string
			r    func(string) io.Reader
		}{{"whole", func(s string) io.Reader { return strings.NewReader(s) }}, {"byte by byte", func(s string) io.Reader { return iotest.OneByteReader(strings.NewReader(s)) }}} {
			got, errs := readAll(t, rd.r(tt.in), 0)
			if len(errs) > 0 || !equalEvents(got, tt.want) {
				t.Errorf("%s (%s): got %q, %v; want %q", tt.name, rd.name, got, errs, tt.want)
			}
		}
	}
}

func equalEvents(a, b []wantEvent) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// No size trap, and a bound: an event over the limit is reported and
// skipped, and the next one is read.
func TestSSEReaderLimit(t *testing.T) {
	big := strings.Repeat("x", 1<<20)
	in := "data: " + big + "\n\ndata: small\n\n"
	got, errs := readAll(t, strings.NewReader(in), 0)
	if len(errs) != 0 || len(got) != 2 || len(got[0].data) != 1<<20 {
		t.Fatalf("1 MiB event under the default limit: %d events, %v", len(got), errs)
	}
	got, errs = readAll(t, strings.NewReader(in), 1000)
	if len(errs) != 1 || !errors.Is(errs[0], ErrEventTooLarge) || len(got) != 1 || got[0].data != "small" {
		t.Fatalf("over the limit: got %q, %v", got, errs)
	}
}

func TestWriteSSERoundTrip(t *testing.T) {
	for _, data := range []string{`{"jsonrpc":"2.0"}`, "two\nlines", "cr\rand\r\ncrlf", ""} {
		var b bytes.Buffer
		Write(&b, "5", []byte(data))
		got, errs := readAll(t, &b, 0)
		want := strings.NewReplacer("\r\n", "\n", "\r", "\n").Replace(data)
		if len(errs) > 0 || len(got) != 1 || got[0].data != want || got[0].id != "5" {
			t.Errorf("round trip of %q: %q, %v", data, got, errs)
		}
	}
}

func FuzzSSEReader(f *testing.F) {
	f.Add([]byte("data: {\"a\":1}\r\n\r\nevent: x\rid: 3\rdata: y\r\r"), 64)
	f.Add([]byte(": c\n\ndata:\ndata\n\nretry: 10\n"), 8)
	f.Fuzz(func(t *testing.T, in []byte, max int) {
		if max < 1 || max > 1<<16 {
			return
		}
		sr := NewReader(bytes.NewReader(in), max)
		for range len(in) + 2 {
			ev, err := sr.Next()
			if err == io.EOF {
				return
			}
			if errors.Is(err, ErrEventTooLarge) {
				continue
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(ev.Data) > max {
				t.Fatalf("event of %d bytes passed limit %d", len(ev.Data), max)
			}
		}
		t.Fatal("reader did not end")
	})
}
