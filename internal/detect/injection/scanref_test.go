package injection

import (
	"cmp"
	"encoding/base64"
	"slices"

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
	found := s.out
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
