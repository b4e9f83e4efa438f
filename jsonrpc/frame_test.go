package jsonrpc

import (
	"errors"
	"io"
	"strings"
	"testing"
)

func TestLineStreamRead(t *testing.T) {
	in := "{\"a\":1}\r\n\n   \n{\"b\":2}\n" + `{"id":5,"x":"` + strings.Repeat("y", 300) + "\"}\n{\"c\":3}"
	s := NewLineStream(strings.NewReader(in), io.Discard, nil, 100)
	want := []string{`{"a":1}`, `{"b":2}`, "too large", `{"c":3}`, "EOF"}
	for _, w := range want {
		msg, err := s.Read()
		var tl *TooLargeError
		switch {
		case errors.As(err, &tl):
			if w != "too large" {
				t.Fatalf("got TooLargeError, want %s", w)
			}
			if tl.Limit != 100 || tl.Size != 315 || !strings.HasPrefix(string(tl.Prefix), `{"id":5,`) || len(tl.Prefix) > 100 {
				t.Errorf("TooLargeError = size %d limit %d prefix %q", tl.Size, tl.Limit, tl.Prefix)
			}
			if got, _, _ := peekPrefix(tl.Prefix); got.String() != "5" {
				t.Errorf("id from prefix = %q, want 5", got)
			}
		case err == io.EOF:
			if w != "EOF" {
				t.Fatalf("got EOF, want %s", w)
			}
		case err != nil:
			t.Fatalf("Read: %v", err)
		default:
			if string(msg) != w {
				t.Errorf("Read = %q, want %q", msg, w)
			}
		}
	}
}

// A line longer than bufio's buffer but within the limit is one message:
// no 64 KiB trap.
func TestLineStreamLongLine(t *testing.T) {
	long := `{"x":"` + strings.Repeat("z", 1<<20) + `"}`
	s := NewLineStream(strings.NewReader(long+"\n"), io.Discard, nil, 0)
	msg, err := s.Read()
	if err != nil || len(msg) != len(long) {
		t.Fatalf("Read = %d bytes, %v; want %d bytes", len(msg), err, len(long))
	}
}

func FuzzLineStream(f *testing.F) {
	f.Add([]byte("{\"a\":1}\n{\"b\"\r\n\n"), 8)
	f.Add([]byte(strings.Repeat("x", 200)+"\nnext\n"), 16)
	f.Fuzz(func(t *testing.T, data []byte, max int) {
		if max < 1 || max > 1<<16 {
			return
		}
		s := NewLineStream(strings.NewReader(string(data)), io.Discard, nil, max)
		for range len(data) + 2 {
			msg, err := s.Read()
			var tl *TooLargeError
			if errors.As(err, &tl) {
				if len(tl.Prefix) > max {
					t.Fatalf("prefix of %d bytes kept for limit %d", len(tl.Prefix), max)
				}
				continue
			}
			if err != nil {
				return
			}
			if len(msg) > max || strings.ContainsAny(string(msg), "\n") {
				t.Fatalf("message %q breaks limit %d or holds a newline", msg, max)
			}
		}
		t.Fatalf("stream did not end")
	})
}
