package injection

import (
	"cmp"
	"encoding/base64"
	"slices"
	"unicode/utf8"

	"github.com/mcpgate/mcpgate/internal/detect"
)

// refScan is Scan as it was before quietPhrases: the whole matching form
// of every text with a trigger word, a "<|" or a character outside ASCII.
// It is the reference the fast path is checked against (FuzzQuietAsFull).
func (d *Detector) refScan(text string, dst []detect.Finding) []detect.Finding {
	s := new(scanner)
	s.out = s.out[:0]
	var runs letterRun
	if d.unfiltered || !d.phraseFree(text, &runs) {
		s.out = d.scanPhrases(s, text)
	}
	if d.enabled.has(KindEncodedPayload) {
		s.out = d.scanEncoded(text, s.out, &runs)
	}
	found := d.recapUnicode(s, text)
	slices.SortFunc(found, func(a, b rawFinding) int {
		if c := cmp.Compare(a.Start, b.Start); c != 0 {
			return c
		}
		return cmp.Compare(b.End, a.End)
	})
	end := 0
	for _, f := range found {
		if f.Start < end {
			continue
		}
		dst = append(dst, f)
		end = f.End
	}
	return dst
}

// refMayBeText is mayBeText as it was, with enc.Decode: the reference of
// FuzzMayBeText.
func refMayBeText(enc *base64.Encoding, in, scratch []byte) bool {
	m, err := enc.Decode(scratch, in[:min(len(in), 16)])
	if err != nil {
		return false
	}
	np := 0
	for _, c := range scratch[:m] {
		if !(0x20 <= c && c < 0x7F || c == '\n' || c == '\t' || c == '\r') {
			np++
		}
	}
	return np*10 <= len(in)*3/4
}

// phraseFree was Scan's test for a text in which no phrase rule can match
// (quietPhrases does more); refScan still runs it, as Scan did.
//
// phraseFree reports whether no phrase rule can match text and no
// character of it is a finding: it is plain ASCII, with no trigger word
// and no "<|". That is exact, not a guess: on ASCII the matching form only
// lower-cases letters and collapses white space (control characters and
// punctuation are kept), so its words are text's runs of letters, digits
// and '_', lower-cased, and a '<' is next to a '|' in one exactly when it
// is in the other; matchPhrases tries a rule only at a trigger word or at
// "<|", and the Unicode findings need a byte of 0x80 or more.
func (d *Detector) phraseFree(text string, runs *letterRun) bool {
	var lower [maxTriggerLen]byte
	for i := 0; i < len(text); {
		c := text[i]
		if !asciiWordBytes[c] {
			if c >= utf8.RuneSelf || c == '<' && i+1 < len(text) && text[i+1] == '|' {
				return false
			}
			i++
			continue
		}
		j := wordEnd(text, i+1, runs)
		if n := j - i; n <= d.maxTrigger {
			w := lower[:n]
			for k := range w {
				w[k] = asciiFold[text[i+k]]
			}
			if d.mayTrigger(w) && d.triggers[string(w)] != nil {
				return false
			}
		}
		i = j
	}
	return true
}
