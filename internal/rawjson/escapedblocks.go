package rawjson

import (
	"encoding/binary"
	"math/bits"
)

// A tool's text that is itself JSON, or logs, has a backslash every dozen
// bytes once escaped (a 50 MiB result, four million escapes). Stopping on
// each, the string scan paid a mispredicted branch per escape, most of
// mcpgate's CPU on such a result. escapedBlocks reads such text 64 bytes
// at a time instead: the block's backslashes and quotes as bit masks, the
// escaped bytes found with carries (as simdjson does), and only the
// escaped bytes looked at one by one, with no branch on what they are.

// escapedBlocks skips, from b[i] inside a string, the 64-byte blocks that
// hold nothing but plain bytes and two-byte escapes (\" \\ \/ \b \f \n \r
// \t), and returns where the byte loop goes on: at the first block that
// holds anything else (the closing quote, a \u, a control byte, an
// invalid escape), or fewer than 64 bytes from the end, or after a few
// blocks with one backslash or none (stringRest's word loop and plainRun
// are faster on those); never inside an escape.
func escapedBlocks(b []byte, i int) int {
	var carry uint64 // 1 when b[i] is escaped by the backslash before it
	sparse := 0      // blocks in a row with one backslash or none
	for len(b)-i >= 64 && sparse < escapedBlocksSparse {
		c := b[i : i+64 : i+64]
		var bs, qc uint64 // backslashes; quotes and control bytes
		for k := 0; k < 64; k += 8 {
			w := binary.LittleEndian.Uint64(c[k:])
			bs |= byteMask(zeroBytes(w^'\\'*everyByte)) << k
			qc |= byteMask(quoteOrControl(w)) << k
		}
		code := escapeCode(bs &^ carry)
		esc := code ^ (bs | carry) // the escaped bytes
		if qc&^esc != 0 {
			break // an escaped control byte is one notShortEscape marks
		}
		var bad byte
		for e := esc; e != 0; e &= e - 1 {
			bad |= notShortEscape[c[bits.TrailingZeros64(e)&63]]
		}
		if bad != 0 {
			break
		}
		if bs&(bs-1) == 0 {
			sparse++
		} else {
			sparse = 0
		}
		carry = (code & bs) >> 63
		i += 64
	}
	return i - int(carry)
}

// escapedBlocksSparse is how many blocks in a row with one backslash or
// none escapedBlocks passes before it leaves the string to the word loops.
const escapedBlocksSparse = 2

const (
	everyByte = 0x0101010101010101
	highBits  = 0x8080808080808080
	lowBits   = 0x7f7f7f7f7f7f7f7f
)

// zeroBytes has the high bit set in exactly the bytes of x that are zero
// (no borrow runs from one byte into the next).
func zeroBytes(x uint64) uint64 {
	return ^((x&lowBits + lowBits) | x) & highBits
}

// quoteOrControl has the high bit set in exactly the bytes of w that are
// a quote or below 0x20: flipping bit 1 takes the quote to 0x20, keeps
// the control bytes below it, and the other bytes from 0x20 on at 0x21 or
// above (special's test, without its borrows).
func quoteOrControl(w uint64) uint64 {
	q := w ^ 0x02*everyByte
	return ^((q&lowBits + (0x80-0x21)*everyByte) | q) & highBits
}

// byteMask gathers the high bits of m's bytes into a byte, byte k's as
// bit k.
func byteMask(m uint64) uint64 {
	return (m >> 7) * 0x0102040810204080 >> 56
}

// escapeCode takes the backslashes of a block that are not themselves
// escaped, and marks, in each run of them, the ones that escape (the
// first, third...) and the bit after an odd run's last one; escapeCode ^
// backslashes is then the escaped bytes. simdjson's
// next_escape_and_terminal_code: subtracting the run from its shifted
// copy with the odd bits set flips the bits of a run that starts on an
// odd bit, which the final xor sets right.
func escapeCode(bs uint64) uint64 {
	const odd = 0xaaaaaaaaaaaaaaaa
	return ((bs<<1 | odd) - bs) ^ odd
}

// notShortEscape is 1 for the bytes that do not make a two-byte escape
// after a backslash.
var notShortEscape = func() (t [256]byte) {
	for c := range t {
		if !shortEscape[c] {
			t[c] = 1
		}
	}
	return t
}()
