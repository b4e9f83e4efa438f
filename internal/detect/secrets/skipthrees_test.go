package secrets

import (
	"math/bits"
	"sync"
)

// threesSkip is the prefilter's skip before quads (skipQuads): pairs at
// even distances, then the three bytes at each place of an eight-byte
// block where a pair was near, then the pair and the head at each place
// that passed. It is kept as the reference FuzzSkipHeads holds skipQuads
// to: the same scan, and no stop the old skip would not make for a
// keyword.
type threesSkip struct {
	p      *prefilter
	pairs  *[1 << 16]uint8
	threes *[threeBits]uint8
	heads  *[headBits / 64]uint64
}

// The bits of threesSkip.pairs.
const (
	// pairStart: the pair begins a keyword.
	pairStart = 1 << iota
	// pairNear: a keyword begins at the pair or at the byte before it.
	pairNear
	// pairWhole: the pair is a two-byte keyword.
	pairWhole
)

// headBits is the size of threesSkip.heads.
const headBits = 1 << 16

// head4 and head3 hash a keyword's first four or three bytes (x,
// little-endian) into threesSkip.heads, each byte's 0x20 bit set first.
func head4(x uint32) uint32 { return (x | 0x20202020) * 0x9E3779B1 >> (32 - 16) }
func head3(x uint32) uint32 { return (x&0xFFFFFF | 0x202020) * 0x85EBCA77 >> (32 - 16) }

// threeBits is the size of threesSkip.threes.
const threeBits = 1 << 15

// three hashes three bytes (x, little-endian, the rest ignored), each
// byte's 0x20 bit set first.
func three(x uint32) uint32 { return three32(x | 0x202020) }

// three32 is three of bytes whose 0x20 bits are set.
func three32(x uint32) uint32 { return (x << 8) * 0x2545F491 >> (32 - 15) }

var defaultThreesSkip = sync.OnceValue(func() *threesSkip { return newThreesSkip(Default().pre) })

func newThreesSkip(p *prefilter) *threesSkip {
	s := &threesSkip{p: p, pairs: threesPairTable(p), threes: new([threeBits]uint8), heads: new([headBits / 64]uint64)}
	for _, k := range p.keywords {
		x := uint32(k.text[0]) | uint32(k.text[1])<<8
		if len(k.text) > 2 {
			s.threes[three(x|uint32(k.text[2])<<16)] = 1
			continue
		}
		for c := range uint32(256) {
			s.threes[three(x|c<<16)] = 1
		}
	}
	for _, k := range p.keywords {
		if len(k.text) >= 3 {
			var b [4]byte
			copy(b[:], k.text)
			x, h := uint32(b[0])|uint32(b[1])<<8|uint32(b[2])<<16|uint32(b[3])<<24, uint32(0)
			if len(k.text) == 3 {
				h = head3(x)
			} else {
				h = head4(x)
			}
			s.heads[h/64] |= 1 << (h % 64)
		}
	}
	return s
}

func threesPairTable(p *prefilter) *[1 << 16]uint8 {
	classPair := func(a, b uint8) int { return int(a)*p.nclass + int(b) }
	near := make([]bool, p.nclass*p.nclass)
	nearFirst := make([]bool, p.nclass)
	whole := make([]bool, p.nclass*p.nclass)
	for _, k := range p.keywords {
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

// skip is the old skipPairs: the first i from i on where a keyword may
// begin, or len(text).
func (s *threesSkip) skip(text string, i int) int {
	pairs, t := s.pairs, s.threes
	from := i
	for ; i+9 <= len(text); i += 8 {
		b := text[i : i+9]
		x := uint64(b[0]) | uint64(b[1])<<8 | uint64(b[2])<<16 | uint64(b[3])<<24 |
			uint64(b[4])<<32 | uint64(b[5])<<40 | uint64(b[6])<<48 | uint64(b[7])<<56
		if (pairs[uint16(x)]|pairs[uint16(x>>16)]|pairs[uint16(x>>32)]|pairs[uint16(x>>48)])&pairNear == 0 {
			continue
		}
		var before uint64
		if i > 0 {
			before = uint64(text[i-1])
		}
		w := (x<<8 | before) | 0x2020202020202020
		y := x>>56 | uint64(b[8])<<8 | 0x2020
		m := uint(t[three32(uint32(w))]) | uint(t[three32(uint32(w>>8))])<<1 | uint(t[three32(uint32(w>>16))])<<2 | uint(t[three32(uint32(w>>24))])<<3 |
			uint(t[three32(uint32(w>>32))])<<4 | uint(t[three32(uint32(w>>40))])<<5 | uint(t[three32(uint32(w>>48)|uint32(y)<<16)])<<6 | uint(t[three32(uint32(w>>56)|uint32(y)<<8)])<<7
		if i == from {
			m &^= 1
		}
		for ; m != 0; m &= m - 1 {
			j := i - 1 + bits.TrailingZeros(m)
			if pair := pairs[uint16(uint(text[j])|uint(text[j+1])<<8)]; pair&pairStart != 0 && s.mayBegin(text, j, pair) {
				return j
			}
		}
	}
	for j := max(from, i-1); j+1 < len(text); j++ {
		if pair := pairs[uint16(uint(text[j])|uint(text[j+1])<<8)]; pair&pairStart != 0 && s.mayBegin(text, j, pair) {
			return j
		}
	}
	return len(text)
}

func (s *threesSkip) mayBegin(text string, i int, pair uint8) bool {
	if pair&pairWhole != 0 || i+4 > len(text) {
		return true
	}
	b := text[i : i+4]
	x := uint32(b[0]) | uint32(b[1])<<8 | uint32(b[2])<<16 | uint32(b[3])<<24
	h4, h3 := head4(x), head3(x)
	return (s.heads[h4/64]>>(h4%64)|s.heads[h3/64]>>(h3%64))&1 != 0
}

// scan is prefilter.scan skipping with the old skip.
func (s *threesSkip) scan(text string, found func(hit)) {
	p := s.p
	for i := 0; ; {
		if i = s.skip(text, i); i+1 >= len(text) {
			return
		}
		for row := uint16(0); ; {
			row = p.next[int(row)+int(p.class[text[i]])]
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
