package rawjson

import "testing"

// FuzzPlainRun checks the word-at-a-time skip of a string's plain bytes
// against a byte loop: it stops exactly at the first quote, backslash or
// control byte from i on, and short of one only within the last seven
// bytes, which the callers' byte loop reads.
func FuzzPlainRun(f *testing.F) {
	f.Add([]byte(`"jsonrpc":"2.0","id":17,"method":"tools/call"`), uint8(1))
	f.Add([]byte("héllo wörld, a longer run of plain text before the quote\"x"), uint8(0))
	f.Add([]byte("\x00\x1f\\\"\x7f\x80\xff abcdefghijklmnopqrstuvwxyz0123456789"), uint8(3))
	f.Fuzz(func(t *testing.T, b []byte, start uint8) {
		i := min(int(start), len(b))
		want := i
		for want < len(b) && b[want] != '"' && b[want] != '\\' && b[want] >= 0x20 {
			want++
		}
		got := plainRun(b, i)
		if got > want || (got < want && got+8 <= len(b)) {
			t.Fatalf("plainRun(%q, %d) = %d, want %d", b, i, got, want)
		}
	})
}
