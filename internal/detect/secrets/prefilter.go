package secrets

import (
	"fmt"
	"math/bits"
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
	// pairs is, by the bytes themselves (index c0|c1<<8), what scan's skip
	// tests without class lookups: the bits pairStart, pairNear, pairWhole.
	pairs *[1 << 16]uint8
	// threes is 1 at the hash (three) of the first three bytes of every
	// keyword, and of a two-byte keyword followed by any byte: skipPairs'
	// test of each byte where a pair is near.
	threes *[threeBits]uint8
	// heads has the bit of the hash of the first four bytes of every
	// keyword of four or more (head4), and of the three of every keyword of
	// three (head3): skipPairs' last test (mayBegin).
	heads    *[headBits / 64]uint64
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

	p.pairs = p.pairTable(keywords)
	p.threes = new([threeBits]uint8)
	for _, k := range keywords {
		x := uint32(k.text[0]) | uint32(k.text[1])<<8
		if len(k.text) > 2 {
			p.threes[three(x|uint32(k.text[2])<<16)] = 1
			continue
		}
		for c := range uint32(256) {
			p.threes[three(x|c<<16)] = 1
		}
	}
	p.heads = new([headBits / 64]uint64)
	for _, k := range keywords {
		if len(k.text) >= 3 {
			var b [4]byte
			copy(b[:], k.text)
			x, h := uint32(b[0])|uint32(b[1])<<8|uint32(b[2])<<16|uint32(b[3])<<24, uint32(0)
			if len(k.text) == 3 {
				h = head3(x)
			} else {
				h = head4(x)
			}
			p.heads[h/64] |= 1 << (h % 64)
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
// The automaton runs only from where a keyword may begin (skipPairs), until
// it is back at its root; in between, skipPairs' tests skip the text. That is
// exact: at the root, no part of a keyword is pending, so the next
// occurrence begins where skipPairs stops. Each of its tests is independent of
// the last, where each step of the automaton waits for the one before, so
// most bytes cost far less.
func (p *prefilter) scan(text string, found func(hit)) {
	next, class := p.next, &p.class
	for i := 0; ; {
		if i = p.skipPairs(text, i); i+1 >= len(text) {
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

// The bits of prefilter.pairs.
const (
	// pairStart: the pair begins a keyword.
	pairStart = 1 << iota
	// pairNear: a keyword begins at the pair or at the byte before it:
	// the pair begins a keyword, or is the second and third bytes of one,
	// or begins with the second byte of a two-byte keyword (whatever
	// follows). Every keyword occurrence then has such a pair at its start
	// or one byte after it, so a test of every other pair finds it.
	pairNear
	// pairWhole: the pair is a two-byte keyword.
	pairWhole
)

func (p *prefilter) pairTable(keywords []keyword) *[1 << 16]uint8 {
	classPair := func(a, b uint8) int { return int(a)*p.nclass + int(b) }
	near := make([]bool, p.nclass*p.nclass)
	nearFirst := make([]bool, p.nclass) // a pair beginning with this class is near
	whole := make([]bool, p.nclass*p.nclass)
	for _, k := range keywords {
		c0, c1 := p.class[k.text[0]], p.class[k.text[1]]
		near[classPair(c0, c1)] = true
		if len(k.text) == 2 {
			nearFirst[c1] = true
			whole[classPair(c0, c1)] = true
		} else {
			near[classPair(c1, p.class[k.text[2]])] = true
		}
	}
	t := new([1 << 16]uint8)
	for c0 := range 256 {
		for c1 := range 256 {
			k0, k1 := p.class[c0], p.class[c1]
			pair := classPair(k0, k1)
			b := &t[c0|c1<<8]
			if p.starts[pair/64]&(1<<(pair%64)) != 0 {
				*b |= pairStart
			}
			if near[pair] || nearFirst[k0] && k0 != 0 {
				*b |= pairNear
			}
			if whole[pair] {
				*b |= pairWhole
			}
		}
	}
	return t
}

// headBits is the size of prefilter.heads: 8 KB, where the default
// rules' 269 heads of three bytes or more leave 99.6% of the bits clear.
const headBits = 1 << 16

// head4 and head3 hash a keyword's first four or three bytes (x, little-
// endian) into prefilter.heads, each byte's 0x20 bit set first: ASCII
// letters then compare without their case, and other bytes at worst
// collide with another one, which costs a walk of the automaton, never a
// keyword missed.
func head4(x uint32) uint32 { return (x | 0x20202020) * 0x9E3779B1 >> (32 - 16) }
func head3(x uint32) uint32 { return (x&0xFFFFFF | 0x202020) * 0x85EBCA77 >> (32 - 16) }

// threeBits is the size of prefilter.threes: 32 KB, 2% of it set by the
// default rules (a two-byte keyword sets 128 entries, one per third byte
// as three folds it).
const threeBits = 1 << 15

// three hashes three bytes (x, little-endian, the rest ignored) into
// prefilter.threes, each byte's 0x20 bit set first, as head4 does.
func three(x uint32) uint32 { return three32(x | 0x202020) }

// three32 is three of bytes whose 0x20 bits are set.
func three32(x uint32) uint32 { return (x << 8) * 0x2545F491 >> (32 - 15) }

// skipPairs returns the first i from i on where a keyword may begin, or
// len(text) when none can (scan's skip). Eight bytes at a time, it tests
// the pairs at even distances from where it began for pairNear, with one
// branch for the four (a keyword beginning at the byte before the eight or
// at one of the first seven has a near pair among them); where one is
// near, the three bytes at each of those eight places in threes, with one
// branch for the eight; at each that passes, the pair for pairStart and the
// bytes for a head (mayBegin). The last bytes are tested one pair at a
// time. No test misses a place where a keyword begins; threes and heads,
// hashed, pass a few where none does. Pairs alone passed a sixth of the
// bytes of code and prose ("re", "he", "se" begin keywords), each then a
// test per byte or a walk of the automaton; three bytes pass about one in
// forty.
func (p *prefilter) skipPairs(text string, i int) int {
	pairs, t := p.pairs, p.threes
	from := i
	for ; i+9 <= len(text); i += 8 {
		b := text[i : i+9]
		x := uint64(b[0]) | uint64(b[1])<<8 | uint64(b[2])<<16 | uint64(b[3])<<24 |
			uint64(b[4])<<32 | uint64(b[5])<<40 | uint64(b[6])<<48 | uint64(b[7])<<56
		if (pairs[uint16(x)]|pairs[uint16(x>>16)]|pairs[uint16(x>>32)]|pairs[uint16(x>>48)])&pairNear == 0 {
			continue
		}
		// The keywords a near pair may begin begin at text[i-1:i+7]: the
		// three bytes at each, with their 0x20 bits set.
		var before uint64
		if i > 0 {
			before = uint64(text[i-1])
		}
		w := (x<<8 | before) | 0x2020202020202020
		y := x>>56 | uint64(b[8])<<8 | 0x2020
		m := uint(t[three32(uint32(w))]) | uint(t[three32(uint32(w>>8))])<<1 | uint(t[three32(uint32(w>>16))])<<2 | uint(t[three32(uint32(w>>24))])<<3 |
			uint(t[three32(uint32(w>>32))])<<4 | uint(t[three32(uint32(w>>40))])<<5 | uint(t[three32(uint32(w>>48)|uint32(y)<<16)])<<6 | uint(t[three32(uint32(w>>56)|uint32(y)<<8)])<<7
		if i == from {
			m &^= 1 // text[i-1] is before where the skip begins
		}
		for ; m != 0; m &= m - 1 {
			j := i - 1 + bits.TrailingZeros(m)
			if pair := pairs[uint16(uint(text[j])|uint(text[j+1])<<8)]; pair&pairStart != 0 && p.mayBegin(text, j, pair) {
				return j
			}
		}
	}
	for j := max(from, i-1); j+1 < len(text); j++ {
		if pair := pairs[uint16(uint(text[j])|uint(text[j+1])<<8)]; pair&pairStart != 0 && p.mayBegin(text, j, pair) {
			return j
		}
	}
	return len(text)
}

// mayBegin reports whether a keyword may begin at text[i], where the pair
// begins one: the pair is a keyword, or the text ends within four bytes,
// or the first four bytes, or three, are a keyword's head (heads).
func (p *prefilter) mayBegin(text string, i int, pair uint8) bool {
	if pair&pairWhole != 0 || i+4 > len(text) {
		return true
	}
	b := text[i : i+4]
	x := uint32(b[0]) | uint32(b[1])<<8 | uint32(b[2])<<16 | uint32(b[3])<<24
	h4, h3 := head4(x), head3(x)
	return (p.heads[h4/64]>>(h4%64)|p.heads[h3/64]>>(h3%64))&1 != 0
}
