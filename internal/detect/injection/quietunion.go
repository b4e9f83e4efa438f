package injection

import (
	"slices"
	"sync"
)

// A common trigger word ("override", "ignore", "instructions") opens the
// windows of five or six rules, each tried at the word and the three
// before it: twenty filter tests, where almost always none admits. The
// rules that start at a word (not at punctuation) are merged here, per
// trigger word, into one filter that admits whatever any of them admits:
// one pair test and one head test per start reject them all, and
// quietTrigger goes rule by rule only when it admits.

// startUnion merges the filters of a trigger word's rules that start at a
// word: the pairs of their short prefixes, and the heads of their long
// ones (as long as the shortest).
type startUnion struct {
	pairs [pairBits / 64]uint64
	heads *headSet
}

// triggerEntry is what quietPhrases looks a trigger word up for.
type triggerEntry struct {
	rules []int
	// back is the most words before the trigger any of rules may start.
	back int
	// active are the rules of the detector's enabled kinds, those that
	// start at punctuation first: they make the form around the word
	// their guards read, and the others' guards are then asked before
	// their merged filter; when that rejects every start, the rest are
	// passed over at once.
	active []*rule
	// union is the rules' startUnion, built the first time the word is
	// met (the filters are built on first use); nil when one of those
	// rules has a filter it cannot merge.
	union func() *startUnion
}

func (d *Detector) newTriggerEntry(rules []int) *triggerEntry {
	e := &triggerEntry{rules: rules, union: sync.OnceValue(func() *startUnion { return d.unionOf(rules) })}
	for _, ri := range rules {
		r := d.rules[ri]
		e.back = max(e.back, r.backWords())
		if d.enabled.has(r.kind) {
			e.active = append(e.active, r)
		}
	}
	slices.SortStableFunc(e.active, func(a, b *rule) int {
		if a.punct == b.punct {
			return 0
		}
		if a.punct {
			return -1
		}
		return 1
	})
	return e
}

// unionOf merges the filters of the rules that start at a word. Each must
// have pairs and long prefixes: its mayAdmit then needs the pair of the
// first two bytes and a long prefix's head.
func (d *Detector) unionOf(rules []int) *startUnion {
	u := new(startUnion)
	var keys [][]prefixKey
	n := maxLongPrefixLen
	for _, ri := range rules {
		r := d.rules[ri]
		if r.punct {
			continue
		}
		f := r.filter()
		if f == nil || f.pairs == nil || f.long == nil {
			return nil
		}
		for k := range u.pairs {
			u.pairs[k] |= f.pairs[k]
		}
		keys = append(keys, f.long.keys)
		n = min(n, f.long.lens[0])
	}
	if keys == nil {
		return nil // only rules that start at punctuation
	}
	u.heads = newHeadSet(n, keys...)
	return u
}

// admitted returns the starts (ASCII word starts in text) at which a rule
// of u may admit a match, a bit for each (the bit k for starts[k]): at the
// others the first two bytes are no pair of theirs, or the head no head of
// theirs. probes caches the probes it reads, probed having the bit of
// each. False when it cannot tell.
func (u *startUnion) admitted(text string, starts []int, probes *[maxBack + 1]probe, probed *int) (int, bool) {
	admitted := 0
	for k, ws := range starts {
		if !mayPair(&prefixFilter{pairs: &u.pairs}, text, ws) {
			continue
		}
		p := &probes[k]
		if *probed&(1<<k) == 0 {
			if !probeInto(p, text, ws) {
				return 0, false
			}
			*probed |= 1 << k
		}
		if p.n >= 2 && u.mayPair(p) && u.heads.mayHave(p) {
			admitted |= 1 << k
		}
	}
	return admitted, true
}

// rejects reports whether no rule of u admits a start at any of starts
// (admitted).
func (u *startUnion) rejects(text string, starts []int, probes *[maxBack + 1]probe, probed *int) bool {
	admitted, ok := u.admitted(text, starts, probes, probed)
	return ok && admitted == 0
}

// mayPair reports whether the first two bytes of p are a pair of u.
func (u *startUnion) mayPair(p *probe) bool {
	h := pairHash(byte(p.w[0]), byte(p.w[0]>>8))
	return u.pairs[h/64]&(1<<(h%64)) != 0
}
