package rawjson

import (
	"bytes"
	"encoding/binary"
	"math/bits"
)

// A long plain run (a big result's text: megabytes without a quote) is
// skipped a window at a time: the window's first quote and first
// backslash found by bytes.IndexByte (vector instructions, several times
// the speed of a word test), and only the control bytes tested word by
// word, with a third of the operations of special. The string scan was
// the largest part of mcpgate's CPU on a 50 MiB result, and a result's
// bytes are read while the server waits to write the next.

// longRunWindow is the window: small enough that its three passes read
// it from the first-level cache, big enough that the IndexByte calls'
// fixed cost is little.
const longRunWindow = 4 << 10

// longRunAfter is how many plain 32-byte blocks plainRun skips before it
// takes a run for long: a list's descriptions and an escaped text (a
// backslash every few bytes) stay on the word loops, which are faster on
// runs of a few hundred bytes than IndexByte's calls.
const longRunAfter = 8

// longPlainRun is plainRun for a run of at least a window from b[i]: it
// returns the index of the first quote, backslash or control byte, or,
// where fewer than a window is left, an index from which plainRun's word
// loops go on.
func longPlainRun(b []byte, i int) int {
	for len(b)-i >= longRunWindow {
		w := b[i : i+longRunWindow]
		end := len(w)
		if q := bytes.IndexByte(w, '"'); q >= 0 {
			end = q
		}
		if s := bytes.IndexByte(w[:end], '\\'); s >= 0 {
			end = s
		}
		if c := firstControl(w[:end]); c < end {
			return i + c
		}
		if end < len(w) {
			return i + end
		}
		i += len(w)
	}
	return i
}

// firstControl returns the index of the first byte of b below 0x20, or
// len(b).
func firstControl(b []byte) int {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	i := 0
	for ; i+32 <= len(b); i += 32 {
		c := b[i : i+32 : i+32]
		w0, w1 := binary.LittleEndian.Uint64(c), binary.LittleEndian.Uint64(c[8:])
		w2, w3 := binary.LittleEndian.Uint64(c[16:]), binary.LittleEndian.Uint64(c[24:])
		if ((w0-0x20*ones)&^w0|(w1-0x20*ones)&^w1|(w2-0x20*ones)&^w2|(w3-0x20*ones)&^w3)&highs != 0 {
			break
		}
	}
	for ; i+8 <= len(b); i += 8 {
		w := binary.LittleEndian.Uint64(b[i:])
		// The lowest byte marked is a control byte: a borrow only runs
		// on from one.
		if m := (w - 0x20*ones) &^ w & highs; m != 0 {
			return i + bits.TrailingZeros64(m)/8
		}
	}
	for ; i < len(b); i++ {
		if b[i] < 0x20 {
			return i
		}
	}
	return i
}
