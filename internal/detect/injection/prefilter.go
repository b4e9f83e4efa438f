package injection

import (
	"encoding/binary"
	"regexp/syntax"
	"slices"
	"sync"
)

// A rule is tried at a handful of word starts per trigger; most of them
// cannot begin a match ("the", "and", or "ignore the warning" for a rule
// that needs "ignore the previous ..."). Running the regexp costs far more
// than looking at a few bytes, so each rule keeps the set of strings a
// match can begin with, computed once from its syntax tree, and a start is
// tried only when the text there begins with one of them. Two sets: the
// first prefixLen bytes (small, a quick reject for most starts), then
// longPrefixLen bytes (the trigger word and the start of the next one or
// two, which is what tells "ignore the previous" from "ignore the
// warning"); a set that grows too large is dropped, leaving the short one.

const (
	prefixLen         = 4    // bytes of the short prefixes
	longPrefixLen     = 12   // bytes of the long prefixes
	maxLongPrefixLen  = 15   // the most a prefixKey holds
	maxPrefixes       = 512  // beyond this many short prefixes a rule is not filtered
	maxLongPrefixes   = 8192 // beyond this many long prefixes only the short ones filter
	maxPrefixWalkStep = 256  // bounds the walk of one pattern
)

// prefixFilter holds the possible beginnings of a match; nil means "no
// filter". The matching form has only ' ' and '\n' for white space; the
// sets are built and looked up with '\n' read as ' ', which keeps them
// small.
type prefixFilter struct {
	// pairs has the bit of pairHash set for the first two bytes of every
	// short prefix: most starts are rejected by one bit test. Nil when a
	// short prefix has fewer than two bytes.
	pairs       *[pairBits / 64]uint64
	short, long *prefixSet
}

const pairBits = 1024

func pairHash(c0, c1 byte) uint {
	if c0 == '\n' {
		c0 = ' '
	}
	if c1 == '\n' {
		c1 = ' '
	}
	return (uint(c0)*31 + uint(c1)) % pairBits
}

func (f *prefixFilter) admits(b []byte) bool {
	if f == nil {
		return true
	}
	p := probeOf(b)
	return f.admitsProbe(&p)
}

// admitsProbe is admits of the bytes p holds.
func (f *prefixFilter) admitsProbe(p *probe) bool {
	if f == nil {
		return true
	}
	if f.pairs != nil {
		if p.n < 2 {
			return false
		}
		if h := pairHash(byte(p.w[0]), byte(p.w[0]>>8)); f.pairs[h/64]&(1<<(h%64)) == 0 {
			return false
		}
	}
	return f.short.has(p) && (f.long == nil || f.long.has(p))
}

// mayAdmit is admitsProbe with only the longer of the two sets, which
// tells the most: it may admit what admitsProbe does not, never the
// reverse (quietPhrases settles what it admits in a window).
func (f *prefixFilter) mayAdmit(p *probe) bool {
	if f.long == nil {
		return f.admitsProbe(p)
	}
	if f.pairs != nil {
		if p.n < 2 {
			return false
		}
		if h := pairHash(byte(p.w[0]), byte(p.w[0]>>8)); f.pairs[h/64]&(1<<(h%64)) == 0 {
			return false
		}
	}
	return f.long.has(p)
}

// probe is the first bytes of the matching form at a start, as the sets
// are looked up ('\n' read as ' '), packed in two words: a start tried
// for several rules, and for several lengths in each, is read once.
type probe struct {
	w [2]uint64
	n int
}

func probeOf(b []byte) probe {
	var buf [16]byte
	n := copy(buf[:maxLongPrefixLen], b)
	for i := range n {
		if buf[i] == '\n' {
			buf[i] = ' '
		}
	}
	return probe{[2]uint64{binary.LittleEndian.Uint64(buf[:8]), binary.LittleEndian.Uint64(buf[8:])}, n}
}

// key is keyOf of the probe's first n bytes (n <= p.n).
func (p *probe) key(n int) prefixKey {
	k0, k1 := p.w[0], p.w[1]
	if n < 8 {
		k0 &= 1<<(8*n) - 1
		k1 = 0
	} else {
		k1 &= 1<<(8*(n-8)) - 1
	}
	return prefixKey{k0, k1 | uint64(n)<<56}
}

// prefixSet is a set of strings of at most longPrefixLen bytes; a string
// shorter than its set's length accepts any continuation.
type prefixSet struct {
	lens []int       // the lengths present, ascending
	keys []prefixKey // sorted: a long set has thousands, and a map would cost twice the memory
	// hint has the bit keyHint(k) of each key: a prefix whose bit is clear
	// is not in the set, without the binary search (on prose most tries of
	// a trigger word's rule end here). About one byte per key.
	hint []uint64
	// heads holds the first lens[0] bytes of every key: one bit test
	// rejects a probe for all the lengths, where hint takes one per length
	// (a long set has up to six, from 8 to 14 bytes). Nil with one length.
	heads *headSet
}

// headSet is a hint of the first n bytes (the head) of a set of prefixes
// of n bytes or more: a probe whose head's bit is clear begins with none
// of them.
type headSet struct {
	n    int
	bits []uint64
}

// newHeadSet makes the headSet of keys' first n bytes (each key has n or
// more).
func newHeadSet(n int, keys ...[]prefixKey) *headSet {
	// The heads are counted in a walk's buffer, sorted: a map of them was
	// a fifth of what the filters of a first list allocated.
	w := prefixWalks.Get().(*prefixWalk)
	defer w.release()
	heads := w.set[:0]
	for _, ks := range keys {
		for _, k := range ks {
			heads = append(heads, k.cut(n))
		}
	}
	slices.SortFunc(heads, comparePrefixKeys)
	heads = slices.CompactFunc(heads, func(a, b prefixKey) bool { return a == b })
	w.set = heads[:0]
	words := 1 // 16 bits a head at least, a power of two
	for words*64 < 16*len(heads) {
		words *= 2
	}
	h := &headSet{n: n, bits: make([]uint64, words)}
	for _, k := range heads {
		b := keyHint(k, uint64(words)*64-1)
		h.bits[b/64] |= 1 << (b % 64)
	}
	return h
}

// mayHave reports whether p may begin with one of the set's prefixes.
func (h *headSet) mayHave(p *probe) bool {
	if p.n < h.n {
		return false
	}
	b := keyHint(p.key(h.n), uint64(len(h.bits))*64-1)
	return h.bits[b/64]&(1<<(b%64)) != 0
}

// cut is the key of k's first n bytes (n <= k.len()).
func (k prefixKey) cut(n int) prefixKey {
	p := probe{w: [2]uint64{k[0], k[1] &^ (0xFF << 56)}, n: k.len()}
	return p.key(n)
}

// keyHint is k's bit in a hint of mask+1 bits.
func keyHint(k prefixKey, mask uint64) uint64 {
	return ((k[0] ^ k[1]*0x9E3779B97F4A7C15) * 0xBF58476D1CE4E5B9 >> 32) & mask
}

// prefixKey packs a prefix of up to 15 bytes and its length: hashing two
// words is cheaper than hashing a string.
type prefixKey [2]uint64

func keyOf(p []byte) prefixKey {
	var buf [16]byte
	copy(buf[:], p)
	buf[15] = byte(len(p))
	return prefixKey{binary.LittleEndian.Uint64(buf[:8]), binary.LittleEndian.Uint64(buf[8:])}
}

// has reports whether the probed bytes begin with a string of the set.
func (s *prefixSet) has(p *probe) bool {
	if s.heads != nil && !s.heads.mayHave(p) {
		return false
	}
	for _, n := range s.lens {
		if n > p.n {
			return false
		}
		k := p.key(n)
		if h := keyHint(k, uint64(len(s.hint))*64-1); s.hint[h/64]&(1<<(h%64)) == 0 {
			continue
		}
		if _, ok := slices.BinarySearchFunc(s.keys, k, comparePrefixKeys); ok {
			return true
		}
	}
	return false
}

// newPrefixSet makes a set of keys, sorted and without duplicates (what
// prefixes returns).
func newPrefixSet(keys []prefixKey) *prefixSet {
	s := &prefixSet{keys: slices.Clip(keys)}
	for _, k := range keys {
		if n := k.len(); !slices.Contains(s.lens, n) {
			s.lens = append(s.lens, n)
		}
	}
	slices.Sort(s.lens)
	if len(s.lens) > 1 {
		s.heads = newHeadSet(s.lens[0], keys)
	}
	words := 1 // 8 bits a key at least, a power of two
	for words*64 < 8*len(keys) {
		words *= 2
	}
	s.hint = make([]uint64, words)
	for _, k := range keys {
		h := keyHint(k, uint64(words)*64-1)
		s.hint[h/64] |= 1 << (h % 64)
	}
	return s
}

// len is the length of the prefix k packs.
func (k prefixKey) len() int { return int(k[1] >> 56) }

// byteAt is the prefix's byte i (i < len).
func (k prefixKey) byteAt(i int) byte {
	if i < 8 {
		return byte(k[0] >> (8 * i))
	}
	return byte(k[1] >> (8 * (i - 8)))
}

func comparePrefixKeys(a, b prefixKey) int {
	switch {
	case a[0] != b[0]:
		return cmpWord(a[0], b[0])
	case a[1] != b[1]:
		return cmpWord(a[1], b[1])
	}
	return 0
}

// cmpWord compares two different words (cmp.Compare, which also orders
// NaNs, costs a third of sorting a large set).
func cmpWord(a, b uint64) int {
	if a < b {
		return -1
	}
	return 1
}

// newPrefixFilter computes the filter of an anchored rule pattern. It is a
// superset of the real beginnings: whatever it cannot follow (a large
// class, an unbounded repetition of something that may be empty) it
// accepts.
func newPrefixFilter(pattern string) *prefixFilter {
	return prefixFilterOf(ruleSyntax(pattern), longPrefixLen)
}

// ruleSyntax is a rule pattern's syntax tree, simplified.
func ruleSyntax(pattern string) *syntax.Regexp {
	re, err := syntax.Parse(pattern, syntax.Perl)
	if err != nil {
		panic(err) // the same pattern compiled with regexp.MustCompile
	}
	return re.Simplify()
}

// prefixFilterOf is newPrefixFilter of a pattern's simplified syntax, its
// long prefixes longLen bytes.
func prefixFilterOf(re *syntax.Regexp, longLen int) *prefixFilter {
	w := prefixWalks.Get().(*prefixWalk)
	short, ok := w.prefixes(re, prefixLen, maxPrefixes)
	if !ok || short[0] == (prefixKey{}) {
		w.release()
		return nil
	}
	short = slices.Clone(short)
	var long []prefixKey
	if l, ok := w.prefixes(re, longLen, maxLongPrefixes); ok && l[0] != (prefixKey{}) {
		long = slices.Clone(l)
	}
	w.release() // before the sets are made: their heads are counted in a walk's buffer
	f := &prefixFilter{short: newPrefixSet(short), pairs: new([pairBits / 64]uint64)}
	for _, p := range short {
		if p.len() < 2 {
			f.pairs = nil
			break
		}
		h := pairHash(p.byteAt(0), p.byteAt(1))
		f.pairs[h/64] |= 1 << (h % 64)
	}
	if long != nil {
		f.long = newPrefixSet(long)
	}
	return f
}

// prefixWalks are the walks of the filters being built, their buffers kept
// from rule to rule: a trigger word's union builds five or six filters at
// once, and a walk's set grows to thousands of keys before it is compacted.
// Each walk growing its own, and a set keeping its walk's buffer, were most
// of what a gateway's first list allocated for the filters. A walk's set
// is made at the most it holds before it is compacted: grown by append,
// each larger copy was written whole, where the pages of one made at its
// most are touched only as far as the walks go (0.2 MiB less resident in
// a gateway after its first list).
var prefixWalks = sync.Pool{New: func() any { return &prefixWalk{set: make([]prefixKey, 0, 2*maxLongPrefixes+1)} }}

// release drops what w holds of the pattern it walked (its nodes and
// stars point into the syntax tree) and gives it back to prefixWalks.
func (w *prefixWalk) release() {
	clear(w.nodes[:cap(w.nodes)])
	clear(w.stars)
	prefixWalks.Put(w)
}

// prefixes returns the beginnings (up to k bytes) of what re matches,
// sorted, without duplicates, never empty. It returns false when there are
// more than limit of them or the walk goes too deep.
//
// The walk visits every path through the pattern up to k bytes, which is
// thousands of steps for a rule: each step keeps what it has read in a
// fixed array and what is left to match in a list that shares its tail
// (on w's stack of nodes), so that a step costs no copying of either, and
// no allocation once the stack has grown. The beginnings are collected
// in a slice, sorted and compacted when it fills: a map of thousands of
// keys was most of the memory a first scan takes.
//
// The slice returned is w's buffer, valid until its next walk.
func (w *prefixWalk) prefixes(re *syntax.Regexp, k, limit int) ([]prefixKey, bool) {
	w.k, w.limit = k, limit
	w.set, w.sorted = w.set[:0], 0
	w.nodes = append(w.nodes[:0], seqNode{re: re, next: noNode})
	if !w.walk(0, prefixHead{}, 0) || !w.compact() {
		return nil, false
	}
	return w.set, len(w.set) > 0
}

type prefixWalk struct {
	k, limit int
	set      []prefixKey // sorted and unique up to sorted
	sorted   int
	// nodes hold the sequences of what is left to match, as a stack: a
	// step's nodes are needed only by the steps under it, so each walk
	// drops those it added when it returns. Allocated one by one, they
	// were a quarter of the memory a first check of a definition takes.
	nodes []seqNode
	// stars are the x* made for the unrolled passes of each x+.
	stars map[*syntax.Regexp]*syntax.Regexp
}

// add adds a beginning; false when there are too many.
func (w *prefixWalk) add(key prefixKey) bool {
	w.set = append(w.set, key)
	if len(w.set)-w.sorted > max(64, w.sorted) {
		return w.compact()
	}
	return true
}

// compact sorts the set and drops duplicates; false when more than limit
// are left.
func (w *prefixWalk) compact() bool {
	slices.SortFunc(w.set, comparePrefixKeys)
	w.set = slices.CompactFunc(w.set, func(a, b prefixKey) bool { return a == b })
	w.sorted = len(w.set)
	return len(w.set) <= w.limit
}

// seqNode is what is left to match: re, then the node at index next of
// the walk's nodes (noNode: nothing).
type seqNode struct {
	re   *syntax.Regexp
	next int32
}

const noNode = -1

// prefixHead is what a path has read so far, at most longPrefixLen bytes.
type prefixHead struct {
	b [maxLongPrefixLen]byte
	n int
}

// plus is h followed by s, cut at k bytes (a head of k bytes ends the walk).
func (h prefixHead) plus(s []byte, k int) prefixHead {
	h.n += copy(h.b[h.n:k], s)
	return h
}

func (h *prefixHead) key() prefixKey { return keyOf(h.b[:h.n]) }

// then is the sequence first..., then rest, as a node index.
func (w *prefixWalk) then(rest int32, first ...*syntax.Regexp) int32 {
	for i := len(first) - 1; i >= 0; i-- {
		w.nodes = append(w.nodes, seqNode{re: first[i], next: rest})
		rest = int32(len(w.nodes) - 1)
	}
	return rest
}

// star is x* for the x+ plus.
func (w *prefixWalk) star(plus *syntax.Regexp) *syntax.Regexp {
	if plus.Op == syntax.OpStar {
		return plus
	}
	if s, ok := w.stars[plus]; ok {
		return s
	}
	if w.stars == nil {
		w.stars = map[*syntax.Regexp]*syntax.Regexp{}
	}
	s := &syntax.Regexp{Op: syntax.OpStar, Flags: plus.Flags, Sub: plus.Sub}
	w.stars[plus] = s
	return s
}

func (w *prefixWalk) walk(seq int32, head prefixHead, depth int) bool {
	if depth > maxPrefixWalkStep {
		return false
	}
	if head.n >= w.k || seq == noNode {
		return w.add(head.key())
	}
	mark := len(w.nodes)
	defer func() { w.nodes = w.nodes[:mark] }()
	n, rest := w.nodes[seq].re, w.nodes[seq].next
	switch n.Op {
	case syntax.OpEmptyMatch, syntax.OpBeginText, syntax.OpBeginLine, syntax.OpWordBoundary, syntax.OpNoWordBoundary:
		return w.walk(rest, head, depth+1)
	case syntax.OpEndText, syntax.OpEndLine:
		return w.add(head.key()) // the match may end here: anything may follow
	case syntax.OpLiteral:
		var buf [maxLongPrefixLen]byte
		lit := buf[:0]
		for _, r := range n.Rune {
			if r >= 0x80 || n.Flags&syntax.FoldCase != 0 {
				return w.add(head.key())
			}
			if r == '\n' {
				r = ' '
			}
			if len(lit) < len(buf) {
				lit = append(lit, byte(r))
			}
		}
		return w.walk(rest, head.plus(lit, w.k), depth+1)
	case syntax.OpCharClass:
		var buf [maxClassChars]byte
		chars, ok := classChars(buf[:0], n.Rune)
		if !ok {
			return w.add(head.key())
		}
		for _, c := range chars {
			if !w.walk(rest, head.plus([]byte{c}, w.k), depth+1) {
				return false
			}
		}
		return true
	case syntax.OpCapture:
		return w.walk(w.then(rest, n.Sub[0]), head, depth+1)
	case syntax.OpConcat:
		return w.walk(w.then(rest, n.Sub...), head, depth+1)
	case syntax.OpAlternate:
		for _, sub := range n.Sub {
			if !w.walk(w.then(rest, sub), head, depth+1) {
				return false
			}
			w.nodes = w.nodes[:mark]
		}
		return true
	case syntax.OpQuest:
		return w.walk(rest, head, depth+1) && w.walk(w.then(rest, n.Sub[0]), head, depth+1)
	case syntax.OpStar, syntax.OpPlus:
		if minLen(n.Sub[0]) == 0 {
			return w.add(head.key()) // each pass may add nothing: accept anything
		}
		// Unrolled: zero passes (star only), or one and the star again.
		// Each pass adds a byte to head, so the walk ends at k bytes.
		if n.Op == syntax.OpStar && !w.walk(rest, head, depth+1) {
			return false
		}
		return w.walk(w.then(rest, n.Sub[0], w.star(n)), head, depth+1)
	}
	return w.add(head.key()) // anything else (OpRepeat is gone after Simplify): accept any continuation
}

// maxClassChars is the most bytes of a character class the walk follows.
const maxClassChars = 16

// classChars appends to chars the bytes a character class can match in
// the matching form, white space read as ' '; false for a class too large
// to follow or with non-ASCII members. The walk passes a buffer of
// maxClassChars: a class is met at every path through it, and allocating
// its bytes each time was a tenth of what building the filters allocated.
func classChars(chars []byte, ranges []rune) ([]byte, bool) {
	for i := 0; i < len(ranges); i += 2 {
		if ranges[i+1] >= 0x80 || ranges[i+1]-ranges[i] > 16 {
			return nil, false
		}
		for c := ranges[i]; c <= ranges[i+1]; c++ {
			switch c {
			case '\t', '\r', '\v', '\f':
				continue // never in the matching form
			case '\n':
				c = ' '
			}
			if !slices.Contains(chars, byte(c)) {
				if len(chars) == maxClassChars {
					return nil, false
				}
				chars = append(chars, byte(c))
			}
		}
	}
	return chars, true
}

// minLen is a lower bound of the length in bytes of the strings re
// matches: a literal counts a byte per rune (folded, a rune may match a
// shorter one).
func minLen(re *syntax.Regexp) int {
	switch re.Op {
	case syntax.OpLiteral:
		return len(re.Rune)
	case syntax.OpCharClass, syntax.OpAnyChar, syntax.OpAnyCharNotNL:
		return 1
	case syntax.OpCapture, syntax.OpPlus:
		return minLen(re.Sub[0])
	case syntax.OpRepeat:
		return re.Min * minLen(re.Sub[0])
	case syntax.OpConcat:
		n := 0
		for _, sub := range re.Sub {
			n += minLen(sub)
		}
		return n
	case syntax.OpAlternate:
		n := -1
		for _, sub := range re.Sub {
			if m := minLen(sub); n < 0 || m < n {
				n = m
			}
		}
		return max(n, 0)
	}
	return 0
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}
