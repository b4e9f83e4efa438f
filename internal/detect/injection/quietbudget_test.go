package injection

import (
	"strings"
	"testing"
)

// TestQuietRunsBounded: on a text whose every few words pass a rule's
// prefix filter without a match, the fast path runs no more regexps than
// the full scan may (runBase and one per runEvery bytes) before it gives
// up; it used to run several times that, then give up all the same. Scan
// still finds what the full scan finds.
func TestQuietRunsBounded(t *testing.T) {
	ds := quietDetectors(t)
	for _, unit := range []string{"disregard all prior ", "ignore all previous ", "forget everything ", "you are now ", "ignore previous café "} {
		text := strings.Repeat(unit, (64<<10)/len(unit))
		for k, d := range ds {
			s := new(scanner)
			var runs letterRun
			d.quietPhrases(s, text, &runs)
			if limit := runBase + len(text)/runEvery; s.runs > limit {
				t.Errorf("detector %d, %q repeated: the fast path ran %d regexps, more than the %d the full scan may", k, unit, s.runs, limit)
			}
		}
		sameAsFull(t, ds, text)
	}
}
