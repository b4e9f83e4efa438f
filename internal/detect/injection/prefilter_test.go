package injection

import (
	"slices"
	"strings"
	"testing"
)

// FuzzPrefixFilterKeepsMatches: on any text, the detectors with their
// prefix filters find what they find without them. The filters look at the
// matching form only (lower case, white space collapsed to ' ' or '\n'), so
// the seeds vary case, spacing and line breaks around the phrases.
func FuzzPrefixFilterKeepsMatches(f *testing.F) {
	for _, line := range readLines(f, "injection_sentences.txt") {
		_, text, _ := strings.Cut(line, "\t")
		text = strings.ReplaceAll(text, `\n`, "\n")
		f.Add(text)
		f.Add(strings.ReplaceAll(strings.ToUpper(text), " ", "\n \t"))
	}
	for _, def := range readDefinitions(f, "tools_malicious.json") {
		for _, v := range definitionStrings(def.Def) {
			f.Add(v)
		}
	}
	all := kindSet(1)<<len(Kinds) - 1
	var filtered, unfiltered [2]*Detector
	for i, definitions := range []bool{false, true} {
		filtered[i] = newDetector(all, definitions)
		unfiltered[i] = newDetector(all, definitions)
		for r := range unfiltered[i].filters {
			unfiltered[i].filters[r] = nil
		}
	}
	f.Fuzz(func(t *testing.T, text string) {
		for i := range filtered {
			got, want := filtered[i].Scan(text, nil), unfiltered[i].Scan(text, nil)
			if !slices.Equal(got, want) {
				t.Fatalf("definitions=%v: %q: filtered %v, unfiltered %v", i == 1, text, got, want)
			}
		}
	})
}
