package secrets

import (
	"fmt"
	"slices"
	"strings"
)

// keyword is one literal the prefilter looks for, with the rule it wakes.
type keyword struct {
	text          string // as written in the rule
	caseSensitive bool
	rule          int32
}

// prefilter is an Aho–Corasick automaton over every rule's keywords,
// compiled into a dense table: one pass over a text finds every keyword
// occurrence, in ASCII case-insensitive form, with one table lookup per
// byte. Bytes that occur in no keyword share one class, which keeps the
// table small (states × classes).
//
// The table holds, for each state and class, the next state's row offset
// (state*stride), with its low bit set when keywords end in that state:
// the loop then costs a class lookup, an add and a table load per byte,
// and a bit test finds the rare bytes where a keyword ends. The stride is
// even, so that an offset's low bit is free; offsets are 16 bits, which
// halves the table (254 KB of 32-bit ones for the default rules). It is
// held for the process's life, and the collector lets the heap grow to
// twice what is live: each byte of it cost about two in a gateway's peak
// memory.
type prefilter struct {
	class  [256]uint8 // byte → class; 0 for bytes in no keyword
	nclass int
	stride int      // a row's length: nclass, or one more to make it even
	starts []uint64 // bit class(c0)*nclass+class(c1): a keyword begins with c0 c1
	// quads is, by each pair of bytes (quadIndex), a bit per group of
	// keyword windows (newQuads) whose first pair it may be ([0]), and
	// whose second ([1]): skipQuads' first test, of four bytes at a time,
	// at every other place.
	quads *[1 << 15][2]uint16
	// quadAt is the groups of windows whose keyword begins a byte before,
	// at, or a byte after the window.
	quadAt [3]uint16
	// quiet is eight bytes of one value whose windows, after a pair of
	// it, pass none: skipQuads' first known quiet block.
	quiet uint64
	// whole has the bit of wholeHead of every keyword's first bytes, up to
	// eight: what skipQuads checks where quads pass (mayBegin).
	whole    *[wholeBits / 64]uint64
	next     []uint16 // state*stride + class → next state*stride, |rowHasOutputs if it has outputs
	outStart []int32  // keywords ending in state s: out[outStart[s]:outStart[s+1]]
	out      []int32  // indexes into keywords
	keywords []keyword
}

// rowHasOutputs marks, in prefilter.next, a state where keywords end.
const rowHasOutputs = 1

func newPrefilter(keywords []keyword) *prefilter {
	p := &prefilter{keywords: keywords}
	p.nclass = 1
	for _, k := range keywords {
		for i := 0; i < len(k.text); i++ {
			c := lowerASCII(k.text[i])
			if p.class[c] == 0 {
				p.class[c] = uint8(p.nclass)
				p.nclass++
			}
		}
	}
	if p.nclass > 256 {
		panic("secrets: more than 255 distinct keyword bytes")
	}
	for c := 'A'; c <= 'Z'; c++ {
		p.class[c] = p.class[c+'a'-'A']
	}

	p.starts = make([]uint64, (p.nclass*p.nclass+63)/64)
	for _, k := range keywords {
		if len(k.text) < 2 {
			panic("secrets: keyword " + k.text + " is shorter than two bytes")
		}
		pair := int(p.class[k.text[0]])*p.nclass + int(p.class[k.text[1]])
		p.starts[pair/64] |= 1 << (pair % 64)
	}

	p.quads, p.quadAt = newQuads(keywords)
	p.quiet = p.quietRun()
	p.whole = new([wholeBits / 64]uint64)
	for _, k := range keywords {
		var b [8]byte
		n := copy(b[:], k.text)
		x := uint64(b[0]) | uint64(b[1])<<8 | uint64(b[2])<<16 | uint64(b[3])<<24 |
			uint64(b[4])<<32 | uint64(b[5])<<40 | uint64(b[6])<<48 | uint64(b[7])<<56
		h := wholeHead(x, n)
		p.whole[h/64] |= 1 << (h % 64)
		if n > 4 {
			h = longHead(x)
			p.whole[h/64] |= 1 << (h % 64)
		}
	}

	// The trie, built in the table itself: its states counted first, its
	// edges then written as offsets (noEdge where there is none yet).
	// Built as a row of its own per state, the trie was another copy of
	// the table, allocated and dropped on the first scan (with the rest,
	// 1.4 MB: a gateway's resident memory kept most of it).
	states := p.trieStates(keywords)
	p.stride = p.nclass + p.nclass%2
	if states*p.stride > 1<<16 {
		// Past it, offsets need 32 bits: make next []uint32 (and the
		// tests' copy of the loop) rather than drop keywords.
		panic(fmt.Sprintf("secrets: the keyword automaton has %d states of %d classes, past 16-bit offsets", states, p.nclass))
	}
	const noEdge = 1<<16 - 1 // odd: no offset
	next := make([]uint16, states*p.stride)
	for i := range next {
		next[i] = noEdge
	}
	ends := make([][]int32, states)
	added := 1
	for ki, k := range keywords {
		row := 0
		for i := 0; i < len(k.text); i++ {
			e := &next[row+int(p.class[k.text[i]])]
			if *e == noEdge {
				*e = uint16(added * p.stride)
				added++
			}
			row = int(*e)
		}
		ends[row/p.stride] = append(ends[row/p.stride], int32(ki))
	}

	// Breadth-first: failure links, outputs inherited through them, and the
	// missing edges filled in from the failure state (a DFA).
	fail := make([]int32, states) // the failure state's row offset
	queue := make([]int32, 0, states)
	for c := 0; c < p.nclass; c++ {
		if t := next[c]; t == noEdge {
			next[c] = 0
		} else {
			queue = append(queue, int32(t))
		}
	}
	for len(queue) > 0 {
		row := int(queue[0])
		queue = queue[1:]
		s, f := row/p.stride, int(fail[row/p.stride])
		ends[s] = append(ends[s], ends[f/p.stride]...)
		for c := 0; c < p.nclass; c++ {
			t := next[row+c]
			if t == noEdge {
				next[row+c] = next[f+c]
				continue
			}
			fail[int(t)/p.stride] = int32(next[f+c])
			queue = append(queue, int32(t))
		}
	}

	p.next = next
	p.outStart = make([]int32, 0, states+1)
	for s := range states {
		row := next[s*p.stride : s*p.stride+p.nclass]
		for c, t := range row {
			if len(ends[int(t)/p.stride]) > 0 {
				row[c] |= rowHasOutputs
			}
		}
		p.outStart = append(p.outStart, int32(len(p.out)))
		p.out = append(p.out, ends[s]...)
	}
	p.outStart = append(p.outStart, int32(len(p.out)))
	return p
}

// trieStates counts the states of the keywords' trie: its root and one
// per distinct prefix of a keyword, in class form.
func (p *prefilter) trieStates(keywords []keyword) int {
	forms := make([]string, len(keywords))
	for i, k := range keywords {
		b := make([]byte, len(k.text))
		for j := range b {
			b[j] = p.class[k.text[j]]
		}
		forms[i] = string(b)
	}
	slices.Sort(forms)
	states, last := 1, ""
	for _, f := range forms {
		shared := 0
		for shared < min(len(f), len(last)) && f[shared] == last[shared] {
			shared++
		}
		states += len(f) - shared
		last = f
	}
	return states
}

// hit is one keyword occurrence: text[start:start+len(keyword)].
type hit struct {
	start   int
	keyword int32
}

// scan calls found for every occurrence of a keyword, in order of where
// the occurrence ends. Case-sensitive keywords are checked byte for byte.
//
// The automaton runs only from where a keyword may begin (skipQuads), until
// it is back at its root; in between, skipQuads' tests skip the text. That is
// exact: at the root, no part of a keyword is pending, so the next
// occurrence begins where skipQuads stops. Each of its tests is independent of
// the last, where each step of the automaton waits for the one before, so
// most bytes cost far less.
func (p *prefilter) scan(text string, found func(hit)) {
	next, class := p.next, &p.class
	for i := 0; ; {
		if i = p.skipQuads(text, i); i+1 >= len(text) {
			return
		}
		for row := uint16(0); ; {
			row = next[int(row)+int(class[text[i]])]
			if row&rowHasOutputs != 0 {
				row &^= rowHasOutputs
				p.report(text, i, row, found)
			}
			i++
			if row == 0 {
				break
			}
			if i == len(text) {
				return
			}
		}
	}
}

// report calls found for the keywords ending at text[i], the automaton
// being at row.
func (p *prefilter) report(text string, i int, row uint16, found func(hit)) {
	s := int(row) / p.stride
	for _, ki := range p.out[p.outStart[s]:p.outStart[s+1]] {
		k := &p.keywords[ki]
		start := i + 1 - len(k.text)
		if k.caseSensitive && !strings.HasPrefix(text[start:], k.text) {
			continue
		}
		found(hit{start: start, keyword: ki})
	}
}

// wholeBits is the size of prefilter.whole: 4 KB, where the default
// rules' 272 heads and about 200 long ones leave 98.5% of the bits clear.
const wholeBits = 1 << 15

// wholeHead hashes the first n of eight bytes (x, little-endian), two to
// eight, into prefilter.whole, each byte's 0x20 bit set first, the rest
// zero: ASCII letters then compare without their case, other bytes at
// worst collide with another one (a walk of the automaton, never a
// keyword missed), and heads of different lengths differ, a keyword's
// byte being nonzero so folded.
func wholeHead(x uint64, n int) uint64 {
	return (x | 0x2020202020202020) & (1<<(8*n) - 1) * 0x9E3779B97F4A7C15 >> (64 - 15)
}

// longHead hashes the first four of eight bytes (x, little-endian) as
// wholeHead does, apart from its heads: the head of a keyword longer than
// four, in prefilter.whole.
func longHead(x uint64) uint64 {
	return (x | 0x20202020) & 0xFFFFFFFF * 0xC2B2AE3D27D4EB4F >> (64 - 15)
}

// skipQuads returns the first i from i on where a keyword may begin, or
// len(text) when none can (scan's skip). Eight bytes at a time, it looks
// up the five pairs at even distances from where it began (quads), and
// tests the four windows of two pairs they make for a group of keyword
// windows that has both, with one branch for the four: a keyword that
// begins at the byte before the eight or at one of them has its window
// among them (quadWindows). Where one passes, each place its groups point
// to is checked (mayBegin). The last bytes are checked one place at a
// time. No test misses a place where a keyword begins; the groups and
// heads, shared and hashed, pass a few where none does. The skip before,
// pairs at even distances then three bytes at every place, passed three
// eight-byte blocks in five of a realistic result to its second test
// ("re", "he", "at" begin or end keywords); windows of four bytes pass
// about one in ten, most where a keyword or most of one is.
func (p *prefilter) skipQuads(text string, i int) int {
	q := p.quads
	from := i
	if i+10 > len(text) {
		return p.skipTail(text, from, i)
	}
	first, last := q[quadIndex(text[i], text[i+1])][0], p.quiet
	for {
		var n int
		n, first, last = quadPass(q, text[i:], first, last)
		if i += n; i+10 > len(text) {
			return p.skipTail(text, from, i)
		}
		if j := p.windowStart(text, from, i); j >= 0 {
			return j
		}
		i += 8
		first = q[quadIndex(text[i], text[i+1])][0]
	}
}

// quadPass returns the first block of rest (n, its distance from rest's
// start, a multiple of eight) where a window passes, or where fewer than
// ten bytes are left; first then is the first groups of its first pair,
// last as skipQuads says. first is the first groups of rest's first pair;
// last is eight bytes after a pair, of a block whose windows passed none
// and whose first pair's first groups are its last one's: a block of the
// same bytes after such a pair (a run of one byte, of padding) has the
// same windows. On its own, with few values to keep, the loop keeps them
// in registers; each half of an entry read on its own spares a shift.
func quadPass(q *[1 << 15][2]uint16, rest string, first uint16, last uint64) (n int, firstAt uint16, lastAt uint64) {
	for ; len(rest) >= 10; n, rest = n+8, rest[8:] {
		b := rest[2:10]
		x := uint64(b[0]) | uint64(b[1])<<8 | uint64(b[2])<<16 | uint64(b[3])<<24 |
			uint64(b[4])<<32 | uint64(b[5])<<40 | uint64(b[6])<<48 | uint64(b[7])<<56
		e4 := &q[x>>48&quadMask]
		if x == last && first == e4[0] {
			continue
		}
		e1, e2, e3 := &q[x&quadMask], &q[x>>16&quadMask], &q[x>>32&quadMask]
		if first&e1[1]|e1[0]&e2[1]|e2[0]&e3[1]|e3[0]&e4[1] != 0 {
			return n, first, last
		}
		if first == e4[0] {
			last = x
		}
		first = e4[0]
	}
	return n, first, last
}

// quietRun returns eight bytes of one value (the first that does) whose
// windows pass none when a pair of it comes before: skipQuads may then
// pass any block of them after such a pair untested.
func (p *prefilter) quietRun() uint64 {
	for c := range uint64(256) {
		x := c * 0x0101010101010101
		if e := p.quads[x&quadMask]; e[0]&e[1] == 0 {
			return x
		}
	}
	panic("secrets: every run of one byte may hold a keyword")
}

// skipTail is skipQuads' last bytes, from i on, one place at a time.
func (p *prefilter) skipTail(text string, from, i int) int {
	for j := max(from, i-1); j+1 < len(text); j++ {
		if p.mayBegin(text, j) {
			return j
		}
	}
	return len(text)
}

// windowStart returns the first place, from on, where a keyword may begin
// that the windows of the block at i point to, or -1.
func (p *prefilter) windowStart(text string, from, i int) int {
	q := p.quads
	b := text[i : i+10]
	x := uint64(b[2]) | uint64(b[3])<<8 | uint64(b[4])<<16 | uint64(b[5])<<24 |
		uint64(b[6])<<32 | uint64(b[7])<<40 | uint64(b[8])<<48 | uint64(b[9])<<56
	e0, e1, e2, e3, e4 := q[quadIndex(b[0], b[1])], q[x&quadMask], q[x>>16&quadMask], q[x>>32&quadMask], q[x>>48&quadMask]
	passed := [4]uint16{e0[0] & e1[1], e1[0] & e2[1], e2[0] & e3[1], e3[0] & e4[1]}
	for m, g := range passed {
		if g == 0 {
			continue
		}
		w := i + 2*m
		for d := -1; d <= 1; d++ {
			if j := w + d; g&p.quadAt[d+1] != 0 && j >= from && p.mayBegin(text, j) {
				return j
			}
		}
	}
	return -1
}

// mayBegin reports whether a keyword may begin at text[i], i+1 being in
// the text: the pair begins one (starts), and the text ends within eight
// bytes, or its first two to eight are a keyword's first bytes (whole,
// longHead first for keywords of five or more).
// The heads of four bytes tested before passed "github.com" for
// "github_pat_", "server " for "server=": 2.5 stops of the automaton for
// each keyword found on a realistic result, 1.06 with whole ones.
func (p *prefilter) mayBegin(text string, i int) bool {
	pair := int(p.class[text[i]])*p.nclass + int(p.class[text[i+1]])
	if p.starts[pair/64]&(1<<(pair%64)) == 0 {
		return false
	}
	if i+8 > len(text) {
		return true
	}
	b := text[i : i+8]
	x := uint64(b[0]) | uint64(b[1])<<8 | uint64(b[2])<<16 | uint64(b[3])<<24 |
		uint64(b[4])<<32 | uint64(b[5])<<40 | uint64(b[6])<<48 | uint64(b[7])<<56
	// Keywords of two to four bytes, then, where one longer begins so,
	// longer ones: most places fail the first four tests.
	for n := 2; n <= 4; n++ {
		if h := wholeHead(x, n); p.whole[h/64]&(1<<(h%64)) != 0 {
			return true
		}
	}
	if h := longHead(x); p.whole[h/64]&(1<<(h%64)) == 0 {
		return false
	}
	for n := 5; n <= 8; n++ {
		if h := wholeHead(x, n); p.whole[h/64]&(1<<(h%64)) != 0 {
			return true
		}
	}
	return false
}
