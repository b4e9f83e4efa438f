package httpfront

import (
	"bytes"
	"encoding/json"
	"testing"
)

// oneLine's fast path (a body whose only line breaks are around the value)
// must give what compacting it would: one line, the same JSON.
func FuzzOneLine(f *testing.F) {
	for _, seed := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"ping"}`,
		"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\n",
		"\r\n {\"a\":\n[1,\r\n2]}\n\t",
		"{\"s\":\"a\\nb\"}\n",
		"\n\n",
		"{\"a\":1}\n{\"b\":2}",
		"\v{\"a\":1}\u00a0",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		got := oneLine(bytes.Clone(body))
		if json.Valid(got) != json.Valid(body) {
			t.Fatalf("oneLine(%q) = %q: valid JSON became invalid, or the reverse", body, got)
		}
		if !json.Valid(body) {
			return // answered as invalid, never passed on
		}
		if bytes.ContainsAny(got, "\r\n") {
			t.Fatalf("oneLine(%q) = %q: a line break is left", body, got)
		}
		var want, have bytes.Buffer
		json.Compact(&want, body)
		if err := json.Compact(&have, got); err != nil || !bytes.Equal(have.Bytes(), want.Bytes()) {
			t.Fatalf("oneLine(%q) = %q, not the same JSON (%v)", body, got, err)
		}
	})
}
