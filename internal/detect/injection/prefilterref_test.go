package injection

import (
	"math/rand/v2"
	"reflect"
	"regexp/syntax"
	"slices"
	"testing"
)

// The filters' construction, as it was before its buffers were shared: a
// walk of its own for each rule, a map to count a head set's heads, a new
// slice for each character class met. The filters built now must be these.

func refHeadSet(n int, keys ...[]prefixKey) *headSet {
	distinct := map[prefixKey]bool{}
	for _, ks := range keys {
		for _, k := range ks {
			distinct[k.cut(n)] = true
		}
	}
	words := 1
	for words*64 < 16*len(distinct) {
		words *= 2
	}
	h := &headSet{n: n, bits: make([]uint64, words)}
	for k := range distinct {
		b := keyHint(k, uint64(words)*64-1)
		h.bits[b/64] |= 1 << (b % 64)
	}
	return h
}

func refClassChars(ranges []rune) ([]byte, bool) {
	var chars []byte
	for i := 0; i < len(ranges); i += 2 {
		if ranges[i+1] >= 0x80 || ranges[i+1]-ranges[i] > 16 {
			return nil, false
		}
		for c := ranges[i]; c <= ranges[i+1]; c++ {
			switch c {
			case '\t', '\r', '\v', '\f':
				continue
			case '\n':
				c = ' '
			}
			if !slices.Contains(chars, byte(c)) {
				chars = append(chars, byte(c))
			}
		}
		if len(chars) > 16 {
			return nil, false
		}
	}
	return chars, true
}

// TestPrefixFiltersAsBuiltAlone: every rule's filter is the same built
// first, last, or after any other (the walks share their buffers), and its
// head sets are those of the map that counted them.
func TestPrefixFiltersAsBuiltAlone(t *testing.T) {
	build := func(order []int) []*prefixFilter {
		out := make([]*prefixFilter, len(rules))
		for _, i := range order {
			r := rules[i]
			out[i] = prefixFilterOf(ruleSyntax(r.re.String()), max(r.filterLen, longPrefixLen))
		}
		return out
	}
	order := make([]int, len(rules))
	for i := range order {
		order[i] = i
	}
	forward := build(order)
	rand.New(rand.NewPCG(1, 2)).Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
	shuffled := build(order)
	var longs [][]prefixKey
	for i, f := range forward {
		if !reflect.DeepEqual(f, shuffled[i]) {
			t.Errorf("the filter of rule %d (%.60s) differs with the rules built in another order", i, rules[i].re.String())
		}
		if f == nil {
			continue
		}
		for _, s := range []*prefixSet{f.short, f.long} {
			if s == nil {
				continue
			}
			if cap(s.keys) != len(s.keys) {
				t.Errorf("rule %d: a set of %d keys holds %d", i, len(s.keys), cap(s.keys))
			}
			if s.heads != nil && !reflect.DeepEqual(s.heads, refHeadSet(s.lens[0], s.keys)) {
				t.Errorf("rule %d: the heads of a set of %d keys differ from the reference's", i, len(s.keys))
			}
		}
		if f.long != nil && len(longs) < 6 {
			longs = append(longs, f.long.keys)
		}
	}
	// A union's heads, of several rules' keys at once.
	n := maxLongPrefixLen
	for _, ks := range longs {
		n = min(n, ks[0].len())
	}
	if got, want := newHeadSet(n, longs...), refHeadSet(n, longs...); !reflect.DeepEqual(got, want) {
		t.Errorf("the heads of %d sets at once differ from the reference's", len(longs))
	}
}

// TestClassCharsAsReference: the bytes of every character class of the
// rules, and of random classes, are the reference's.
func TestClassCharsAsReference(t *testing.T) {
	var classes [][]rune
	var visit func(re *syntax.Regexp)
	visit = func(re *syntax.Regexp) {
		if re.Op == syntax.OpCharClass {
			classes = append(classes, re.Rune)
		}
		for _, sub := range re.Sub {
			visit(sub)
		}
	}
	for _, r := range rules {
		visit(ruleSyntax(r.re.String()))
	}
	rnd := rand.New(rand.NewPCG(3, 4))
	for range 2000 {
		var ranges []rune
		lo := rune(rnd.IntN(0x90))
		for range 1 + rnd.IntN(4) {
			hi := lo + rune(rnd.IntN(20))
			ranges = append(ranges, lo, hi)
			lo = hi + 1 + rune(rnd.IntN(10))
		}
		classes = append(classes, ranges)
	}
	for _, c := range classes {
		var buf [maxClassChars]byte
		got, ok := classChars(buf[:0], c)
		want, wantOK := refClassChars(c)
		if ok != wantOK || ok && string(got) != string(want) {
			t.Errorf("classChars(%q) = %q, %v; the reference's %q, %v", c, got, ok, want, wantOK)
		}
	}
}
