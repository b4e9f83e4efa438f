package rawjson

import (
	"encoding/binary"
	"math/bits"
	"strings"
	"testing"
)

// FuzzPlainRun checks plainRun against a byte loop: it stops exactly on
// the first quote, backslash or control byte, unless fewer than 8 bytes
// are left, and never passes one. A stop short of it cost the string
// scanners a word's test for every byte of a short string.
func FuzzPlainRun(f *testing.F) {
	f.Add([]byte(`type": "string"`), uint8(0))
	f.Add([]byte(strings.Repeat("x", 70)+`\n`+strings.Repeat("y", 20)), uint8(3))
	f.Add([]byte(strings.Repeat("x", 5000)+`"`+strings.Repeat("y", 20)), uint8(1)) // longPlainRun's path
	for _, stop := range []string{"\x00", "\x1f", `\`, `"`} {
		for at := range 41 {
			f.Add([]byte(strings.Repeat("\x7f\x80\xff \x20", 9)[:at]+stop+strings.Repeat("z", 40)), uint8(at%5))
		}
	}
	f.Fuzz(func(t *testing.T, b []byte, from uint8) {
		i := min(int(from), len(b))
		first := len(b)
		for j := i; j < len(b); j++ {
			if c := b[j]; c == '"' || c == '\\' || c < 0x20 {
				first = j
				break
			}
		}
		got := plainRun(b, i)
		if got < i || got > first {
			t.Fatalf("plainRun(%q, %d) = %d; the first special byte is at %d", b, i, got, first)
		}
		if got != first && len(b)-got >= 8 {
			t.Fatalf("plainRun(%q, %d) = %d, short of the first special byte at %d with %d bytes left", b, i, got, first, len(b)-got)
		}
	})
}

// TestSpecialEveryByte: special marks a byte, wherever it is in a word of
// plain bytes, exactly when it is a quote, a backslash or below 0x20; the
// bytes around the quote (0x20 to 0x23), folded with it by one test, among
// them.
func TestSpecialEveryByte(t *testing.T) {
	for v := range 256 {
		want := v == '"' || v == '\\' || v < 0x20
		for at := range 8 {
			w := []byte("a\x21#\x20\xff~ \x7f")
			w[at] = byte(v)
			m := special(binary.LittleEndian.Uint64(w)) & 0x8080808080808080
			if got := m != 0 && bits.TrailingZeros64(m)/8 == at; got != want || !want && m != 0 {
				t.Errorf("special(%q) marks %#x; byte %#x at %d special: %v", w, m, v, at, want)
			}
		}
	}
}
