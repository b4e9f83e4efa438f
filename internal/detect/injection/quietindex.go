package injection

// The quiet walk meets a trigger word every twenty-five words of prose
// ("system", "override", "notice"), and three times as many words that
// pass pairLen and lastLen but are none: lower-casing each into a buffer
// and hashing that for the map was a tenth of the walk. triggerIndex
// tells them from the word in the text: a bit of its hint for most, a
// slot and a comparison of the word's bytes for the others.

// triggerIndex is an open-addressed table of the trigger words.
type triggerIndex struct {
	// hint has the bit of each trigger word's wordHash (in
	// triggerHintBits): most words looked up are none, and a bit says so.
	hint [triggerHintBits / 64]uint64
	// slots hold 1 + the index in words, 0 when empty; a power of two,
	// four times the words or more.
	slots   []uint16
	words   []string
	entries []*triggerEntry
}

func newTriggerIndex(triggers map[string]*triggerEntry) triggerIndex {
	n := 64
	for n < 4*len(triggers) {
		n *= 2
	}
	x := triggerIndex{slots: make([]uint16, n), words: make([]string, 0, len(triggers)), entries: make([]*triggerEntry, 0, len(triggers))}
	for w, e := range triggers {
		x.words = append(x.words, w)
		x.entries = append(x.entries, e)
		k := wordHash(w, 0, len(w))
		x.hint[k/64%uint(len(x.hint))] |= 1 << (k % 64)
		for x.slots[k&uint(n-1)] != 0 {
			k++
		}
		x.slots[k&uint(n-1)] = uint16(len(x.words))
	}
	return x
}

// wordHash hashes the ASCII word text[i:j] as it is lower-cased: its
// length and its first, middle and last bytes, each with the bit 0x20 set
// (which lower-cases a letter, keeps a digit, and makes '_' 0x7f).
func wordHash(text string, i, j int) uint {
	n := j - i
	h := uint(n)*0x9E3779B1 ^ uint(text[i]|0x20)<<16 ^ uint(text[j-1]|0x20)<<8 ^ uint(text[i+n/2]|0x20)*0x85EB
	return h ^ h>>13
}

// lookup returns the entry of the ASCII word text[i:j] lower-cased, nil
// when it is no trigger word.
func (x *triggerIndex) lookup(text string, i, j int) *triggerEntry {
	h := wordHash(text, i, j)
	if x.hint[h/64%uint(len(x.hint))]&(1<<(h%64)) == 0 {
		return nil
	}
	return x.lookupHashed(text, i, j, h)
}

// lookupHashed is lookup past the hint, with the word's wordHash h.
func (x *triggerIndex) lookupHashed(text string, i, j int, h uint) *triggerEntry {
	mask := uint(len(x.slots) - 1)
	for k := h; ; k++ {
		slot := x.slots[k&mask]
		if slot == 0 {
			return nil
		}
		if w := x.words[slot-1]; len(w) == j-i && foldedEqual(text[i:j], w) {
			return x.entries[slot-1]
		}
	}
}

// foldedEqual reports whether the ASCII word a lower-cased is w (as long).
func foldedEqual(a, w string) bool {
	for k := range len(w) {
		if asciiFold[a[k]] != w[k] {
			return false
		}
	}
	return true
}
