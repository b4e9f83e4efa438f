package secrets

import "slices"

// quadGroups is how many groups prefilter.quads sorts the keywords'
// windows into: an entry holds a bit per group for the window's first
// pair, and one for its second.
const quadGroups = 16

// quadIndex is a pair's entry in prefilter.quads: the first byte whole,
// the second without its 0x80 bit (a byte past ASCII then shares the
// entry of one in it: a stop the whole heads reject, never a keyword missed).
// It halves the table, to 128 KB.
func quadIndex(b0, b1 byte) uint16 { return uint16(b0) | uint16(b1&0x7F)<<8 }

// quadMask is quadIndex of a pair of bytes read as a little-endian
// uint16: the second byte's 0x80 bit dropped.
const quadMask = 0x7FFF

// quadWindow is what a keyword puts in the four bytes at an even
// distance from where the skip began, at or around where it begins: the
// window's bytes (-1: any byte), whether a letter among them may be in
// either case, and where the keyword begins from the window (-1, 0 or 1).
type quadWindow struct {
	bytes      [4]int
	eitherCase bool
	at         int
}

// quadWindows is a keyword's two windows, one for each parity of where it
// may begin: at an even distance, the window of its first four bytes; at
// an odd one, of its bytes 1 to 4 (the window begins a byte after it), or,
// for a keyword of four bytes or fewer, of the byte before it and its
// first three (the window begins a byte before it). A byte past the
// keyword's end, or before it, is any byte.
func quadWindows(k keyword) [2]quadWindow {
	window := func(from, at int) quadWindow {
		w := quadWindow{eitherCase: !k.caseSensitive, at: at}
		for i := range w.bytes {
			if j := from + i; j >= 0 && j < len(k.text) {
				w.bytes[i] = int(k.text[j])
			} else {
				w.bytes[i] = -1
			}
		}
		return w
	}
	if len(k.text) >= 5 {
		return [2]quadWindow{window(0, 0), window(1, -1)}
	}
	return [2]quadWindow{window(0, 0), window(-1, 1)}
}

// size is how many entries the window's first (half 0) or second pair
// (half 1) has, some of them twice.
func (w quadWindow) size(half int) int {
	return len(w.forms(w.bytes[2*half])) * len(w.forms(w.bytes[2*half+1]))
}

// add sets bit in the entries of the window's first (half 0) or second
// pair (half 1) in quads, or, with dryRun, leaves them; it returns how
// many did not have it.
func (w quadWindow) add(quads *[1 << 15][2]uint16, half int, bit uint16, dryRun bool) int {
	added := 0
	if w.bytes[2*half] < 0 && w.bytes[2*half+1] < 0 {
		for e := range quads {
			if quads[e][half]&bit == 0 {
				added++
				if !dryRun {
					quads[e][half] |= bit
				}
			}
		}
		return added
	}
	for _, b0 := range w.forms(w.bytes[2*half]) {
		for _, b1 := range w.forms(w.bytes[2*half+1]) {
			if e := &quads[quadIndex(b0, b1)][half]; *e&bit == 0 {
				added++
				if !dryRun {
					*e |= bit
				}
			}
		}
	}
	return added
}

// allBytes is every byte, a window's "any byte".
var allBytes = func() (all [256]byte) {
	for i := range all {
		all[i] = byte(i)
	}
	return all
}()

// caseForms holds both cases of each ASCII letter, for forms.
var caseForms = func() (f [26][2]byte) {
	for i := range f {
		f[i] = [2]byte{byte('a' + i), byte('A' + i)}
	}
	return f
}()

// forms is the bytes c may be in a text where the window's keyword
// occurs: itself, or both cases of a letter when the keyword's case does
// not matter, or all (-1).
func (w quadWindow) forms(c int) []byte {
	if c < 0 {
		return allBytes[:]
	}
	if lower := byte(c) | 0x20; w.eitherCase && lower >= 'a' && lower <= 'z' {
		return caseForms[lower-'a'][:]
	}
	return allBytes[c : c+1]
}

// newQuads builds prefilter.quads and the groups of each kind of window:
// at[0] those whose keyword begins a byte before the window, at[1] at it,
// at[2] a byte after it. A group holds windows of one kind, so that a
// group's bit says where to look. Each window goes to the group of its
// kind where it adds the fewest pairs of pairs (first × second): a group
// passes any of its first pairs followed by any of its second, so
// unrelated windows in one group pass texts neither has; a window that
// takes any byte (a short keyword's) is a set of 256 pairs, and its own
// group keeps it from making others' pass everything.
func newQuads(keywords []keyword) (quads *[1 << 15][2]uint16, at [3]uint16) {
	quads = new([1 << 15][2]uint16)
	windows := make([]quadWindow, 0, 2*len(keywords))
	for _, k := range keywords {
		w := quadWindows(k)
		windows = append(windows, w[0], w[1])
	}
	// The widest windows first: they need groups of their own most.
	slices.SortStableFunc(windows, func(a, b quadWindow) int {
		return b.size(0)*b.size(1) - a.size(0)*a.size(1)
	})
	// Groups per kind, about as many as the kind has windows: half the
	// windows begin at the keyword. A window of a two-byte keyword, its
	// second pair any, has a group of its own (anyGroup), where its first
	// pair alone passes.
	kinds := [3][]int{{0, 1, 2, 3, 4}, {5, 6, 7, 8, 9, 10, 11}, {13, 14, 15}}
	const anyGroup = 12
	var firsts, seconds [quadGroups]int
	for _, w := range windows {
		best, bestCost := -1, 0
		if w.bytes[2] < 0 && w.bytes[3] < 0 {
			best = anyGroup
		}
		for _, g := range kinds[w.at+1] {
			if best == anyGroup {
				break
			}
			bit := uint16(1) << g
			f, s := firsts[g]+w.add(quads, 0, bit, true), seconds[g]+w.add(quads, 1, bit, true)
			if cost := f*s - firsts[g]*seconds[g]; best < 0 || cost < bestCost {
				best, bestCost = g, cost
			}
		}
		bit := uint16(1) << best
		firsts[best] += w.add(quads, 0, bit, false)
		seconds[best] += w.add(quads, 1, bit, false)
		at[w.at+1] |= bit
	}
	return quads, at
}
