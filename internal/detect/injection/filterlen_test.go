package injection

import (
	"encoding/binary"
	"slices"
	"strings"
	"testing"
)

// TestCommonPhrasesRejectedByTheFilter: where documentation's ordinary
// phrases share a rule's first twelve bytes ("ignore the d" of "ignore the
// developer instructions", "instructions" of "instructions for the AI"),
// the rule's longer prefixes (filterLen) reject them, so its regexp is not
// run on them: on prose it had been most of the detector's time. A match's
// beginning is still admitted (FuzzPrefixFilterKeepsMatches holds that for
// any text).
func TestCommonPhrasesRejectedByTheFilter(t *testing.T) {
	for _, tc := range []struct{ admitted, ordinary string }{
		{"ignore the developer instructions", "ignore the deprecation notice printed during the build"},
		{"ignore the directives you were given", "ignore the deprecation notice printed during the build"},
		{"instructions for the ai: ", "instructions in the readme before you run the server"},
	} {
		admitting := 0
		for _, r := range rules {
			if !r.filter().admits([]byte(tc.admitted)) {
				continue
			}
			admitting++
			if r.filter().admits([]byte(tc.ordinary)) {
				t.Errorf("the filter of %.60s admits %q", r.re.String(), tc.ordinary)
			}
		}
		if admitting == 0 {
			t.Errorf("no rule's filter admits %q", tc.admitted)
		}
	}
}

// TestPrefixSetHint: a set's hint and heads reject only what the binary
// search would: every key is found, and at every offset of the labelled
// samples and of the corpora has answers as the search alone does.
func TestPrefixSetHint(t *testing.T) {
	searchOnly := func(s *prefixSet, b []byte) bool {
		for _, n := range s.lens {
			if n > len(b) {
				return false
			}
			if _, ok := slices.BinarySearchFunc(s.keys, keyOf(b[:n]), comparePrefixKeys); ok {
				return true
			}
		}
		return false
	}
	var texts []string
	for _, name := range []string{"injection_sentences.txt", "benign_sentences.txt", "tool_output.txt"} {
		texts = append(texts, strings.ToLower(strings.Join(readLines(t, name), " ")))
	}
	for _, name := range realisticCorpora {
		texts = append(texts, strings.ToLower(realisticText(t, name, 8<<10)))
	}
	for _, r := range rules {
		f := r.filter()
		if f == nil {
			continue
		}
		for _, s := range []*prefixSet{f.short, f.long} {
			if s == nil {
				continue
			}
			for _, k := range s.keys {
				b := make([]byte, k.len())
				for i := range b {
					b[i] = k.byteAt(i)
				}
				if !s.has(probeRaw(b)) {
					t.Fatalf("%.40s: the set does not have its key %q", r.re.String(), b)
				}
			}
			for _, text := range texts {
				for i := range len(text) {
					b := []byte(text[i:min(len(text), i+maxLongPrefixLen)])
					if got, want := s.has(probeRaw(b)), searchOnly(s, b); got != want {
						t.Fatalf("%.40s: has(%q) = %v, the search alone %v", r.re.String(), b, got, want)
					}
				}
			}
		}
	}
}

// probeRaw is the probe of b as it is ('\n' kept).
func probeRaw(b []byte) *probe {
	var buf [16]byte
	n := copy(buf[:maxLongPrefixLen], b)
	return &probe{[2]uint64{binary.LittleEndian.Uint64(buf[:8]), binary.LittleEndian.Uint64(buf[8:])}, n}
}
