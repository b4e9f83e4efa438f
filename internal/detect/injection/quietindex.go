package injection

// The quiet walk meets a trigger word every twenty-five words of prose
// ("system", "override", "notice"): lower-casing it into a buffer and
// hashing that for the map was a tenth of the walk. triggerIndex finds
// its entry from the word in the text, with the hash mayTriggerText has
// just passed and a comparison of the word's bytes.

// triggerIndex is an open-addressed table of the trigger words.
type triggerIndex struct {
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
	x := triggerIndex{slots: make([]uint16, n)}
	for w, e := range triggers {
		x.words = append(x.words, w)
		x.entries = append(x.entries, e)
		k := wordHash(w, 0, len(w))
		for x.slots[k&uint(n-1)] != 0 {
			k++
		}
		x.slots[k&uint(n-1)] = uint16(len(x.words))
	}
	return x
}

// wordHash hashes the ASCII word text[i:j] as it is lower-cased.
func wordHash(text string, i, j int) uint {
	n := j - i
	h := uint(n)*0x9E3779B1 ^ uint(asciiFold[text[i]])<<16 ^ uint(asciiFold[text[j-1]])<<8 ^ uint(asciiFold[text[i+n/2]])*0x85EB
	return h ^ h>>13
}

// lookup returns the entry of the ASCII word text[i:j] lower-cased, nil
// when it is no trigger word.
func (x *triggerIndex) lookup(text string, i, j int) *triggerEntry {
	return x.lookupHashed(text, i, j, wordHash(text, i, j))
}

// lookupHashed is lookup with the word's wordHash h.
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
