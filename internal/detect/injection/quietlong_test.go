package injection

import "testing"

// TestQuietLongestTrigger: a word with a folded letter (foldedWord) as long
// as the longest trigger word newDetector accepts is looked up as a
// trigger; at exactly maxTriggerLen bytes it used to be taken as too long.
func TestQuietLongestTrigger(t *testing.T) {
	const trigger = "abcdefghijklmnopqrstuvwxyzabcdef"
	if len(trigger) != maxTriggerLen {
		t.Fatalf("the trigger has %d bytes, want maxTriggerLen (%d)", len(trigger), maxTriggerLen)
	}
	saved := rules
	rules = []*rule{{kind: KindInstructionOverride, triggers: []string{trigger}, re: rx(`\b` + trigger + ` loudly\b`)}}
	d := newDetector(kindSet(1)<<len(Kinds)-1, false)
	rules = saved
	for _, text := range []string{
		"say " + trigger + " loudly",
		"say abcdéfghijklmnopqrstuvwxyzabcdef loudly",
		"say ａbcdefghijklmnopqrstuvwxyzabcdef loudly",
	} {
		got, want := d.Scan(text, nil), d.refScan(text, nil)
		if len(want) == 0 {
			t.Fatalf("%q: the full scan finds nothing; the test's rule is wrong", text)
		}
		if len(got) != len(want) || got[0] != want[0] {
			t.Errorf("%q:\nfast %v\nfull %v", text, got, want)
		}
	}
}
