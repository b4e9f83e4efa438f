package secrets

import "strings"

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
type prefilter struct {
	class    [256]uint8 // byte → class; 0 for bytes in no keyword
	nclass   int
	next     []int32 // state*nclass + class → state
	outStart []int32 // keywords ending in state s: out[outStart[s]:outStart[s+1]]
	out      []int32 // indexes into keywords
	keywords []keyword
}

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

	// The trie, with goto edges per class; -1 is no edge.
	trie := [][]int32{p.newRow()}
	ends := [][]int32{nil}
	for ki, k := range keywords {
		s := int32(0)
		for i := 0; i < len(k.text); i++ {
			c := p.class[k.text[i]]
			if trie[s][c] < 0 {
				trie = append(trie, p.newRow())
				ends = append(ends, nil)
				trie[s][c] = int32(len(trie) - 1)
			}
			s = trie[s][c]
		}
		ends[s] = append(ends[s], int32(ki))
	}

	// Breadth-first: failure links, outputs inherited through them, and the
	// missing edges filled in from the failure state (a DFA).
	fail := make([]int32, len(trie))
	queue := make([]int32, 0, len(trie))
	for c := 0; c < p.nclass; c++ {
		if t := trie[0][c]; t < 0 {
			trie[0][c] = 0
		} else {
			fail[t] = 0
			queue = append(queue, t)
		}
	}
	for len(queue) > 0 {
		s := queue[0]
		queue = queue[1:]
		ends[s] = append(ends[s], ends[fail[s]]...)
		for c := 0; c < p.nclass; c++ {
			t := trie[s][c]
			if t < 0 {
				trie[s][c] = trie[fail[s]][c]
				continue
			}
			fail[t] = trie[fail[s]][c]
			queue = append(queue, t)
		}
	}

	p.next = make([]int32, 0, len(trie)*p.nclass)
	p.outStart = make([]int32, 0, len(trie)+1)
	for s := range trie {
		p.next = append(p.next, trie[s]...)
		p.outStart = append(p.outStart, int32(len(p.out)))
		p.out = append(p.out, ends[s]...)
	}
	p.outStart = append(p.outStart, int32(len(p.out)))
	return p
}

func (p *prefilter) newRow() []int32 {
	row := make([]int32, p.nclass)
	for i := range row {
		row[i] = -1
	}
	return row
}

// hit is one keyword occurrence: text[start:start+len(keyword)].
type hit struct {
	start   int
	keyword int32
}

// scan calls found for every occurrence of a keyword, in order of where
// the occurrence ends. Case-sensitive keywords are checked byte for byte.
func (p *prefilter) scan(text string, found func(hit)) {
	next, class, outStart, nclass := p.next, &p.class, p.outStart, int32(p.nclass)
	s := int32(0)
	for i := 0; i < len(text); i++ {
		s = next[s*nclass+int32(class[text[i]])]
		if outStart[s] == outStart[s+1] {
			continue
		}
		for _, ki := range p.out[outStart[s]:outStart[s+1]] {
			k := &p.keywords[ki]
			start := i + 1 - len(k.text)
			if k.caseSensitive && !strings.HasPrefix(text[start:], k.text) {
				continue
			}
			found(hit{start: start, keyword: ki})
		}
	}
}
