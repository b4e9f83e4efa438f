package rawjson

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// TestByteMask: every pattern of high bits comes back as its byte.
func TestByteMask(t *testing.T) {
	for p := range 256 {
		var m uint64
		for k := range 8 {
			if p>>k&1 != 0 {
				m |= 0x80 << (8 * k)
			}
		}
		if got := byteMask(m); got != uint64(p) {
			t.Fatalf("byteMask(%#x) = %#x, want %#x", m, got, p)
		}
	}
}

// TestEscapeCode: the escaped bytes of escapeCode, with a carry from the
// block before, are the ones a byte-by-byte walk finds, and so is the
// carry to the next block.
func TestEscapeCode(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for n := range 200000 {
		var bs uint64
		switch n % 3 {
		case 0:
			bs = r.Uint64()
		case 1:
			bs = r.Uint64() & r.Uint64() & r.Uint64()
		default:
			bs = r.Uint64() | r.Uint64()
		}
		carry := uint64(n / 3 % 2)
		var want uint64
		next := carry == 1
		for k := range 64 {
			if next {
				want |= 1 << k
				next = false
			} else if bs>>k&1 != 0 {
				next = true
			}
		}
		code := escapeCode(bs &^ carry)
		if got := code ^ (bs | carry); got != want {
			t.Fatalf("bs %#x carry %d: escaped %#x, want %#x", bs, carry, got, want)
		}
		if out := (code & bs) >> 63; (out == 1) != next {
			t.Fatalf("bs %#x carry %d: carry out %d, want %v", bs, carry, out, next)
		}
	}
}

// TestEscapedBlocksStops: escapedBlocks passes blocks of short escapes,
// stops at the block holding what the byte loop must see, never inside an
// escape, and passes a run of backslashes across a block's end.
func TestEscapedBlocksStops(t *testing.T) {
	block := strings.Repeat(`ab\"cd\\ef\n`, 6)[:64] // 64 bytes, ends inside no escape
	for _, tc := range []struct {
		s    string
		want int
	}{
		{block + block + `x"` + strings.Repeat("y", 64), 128},
		{block + `\u0041` + block, 64},
		{block + "\x01" + block + block, 64},
		{block + `\q` + block + block, 64},
		{strings.Repeat("a", 63) + `\` + `"` + strings.Repeat("a", 63) + block, 128}, // two sparse blocks
		{strings.Repeat("a", 63) + `\` + `u0041` + strings.Repeat("a", 59) + block, 63},
		{strings.Repeat("a", 62) + `\\` + `"` + strings.Repeat("a", 63) + block, 64},
		{strings.Repeat("a", 61) + `\\\` + `"` + strings.Repeat("a", 63) + block, 192},
		{strings.Repeat("a", 63) + `\` + `n` + strings.Repeat("a", 63) + block, 128},
		{block + strings.Repeat("a", 62) + `\` + `"` + strings.Repeat("a", 63) + block, 192},
	} {
		got := escapedBlocks([]byte(tc.s), 0)
		if got != tc.want {
			t.Errorf("escapedBlocks(%q) = %d, want %d", tc.s, got, tc.want)
		}
		end, more, esc := stringRest([]byte(tc.s), 0)
		wantEnd, wantMore, wantEsc := stringRestReference([]byte(tc.s), 0)
		if end != wantEnd || more != wantMore || esc != wantEsc {
			t.Errorf("stringRest(%q) = %d, %v, %v; reference %d, %v, %v", tc.s, end, more, esc, wantEnd, wantMore, wantEsc)
		}
	}
}

// TestQuoteOrControl: every byte value, at every place in a word.
func TestQuoteOrControl(t *testing.T) {
	for v := range 256 {
		want := v == '"' || v < 0x20
		for at := range 8 {
			w := []byte("\x00\"\x21#\x20\xff~\x1f")
			w[at] = byte(v)
			var x uint64
			for k, c := range w {
				x |= uint64(c) << (8 * k)
			}
			m := quoteOrControl(x) >> (8*at + 7) & 1
			if (m == 1) != want {
				t.Errorf("quoteOrControl(%q) byte %d (%#x): %d, want %v", w, at, v, m, want)
			}
		}
	}
}
