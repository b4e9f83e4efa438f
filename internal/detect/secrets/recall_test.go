package secrets

import (
	"math/rand/v2"
	"os"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/mcpgate/mcpgate/internal/detect"
)

const samplesPerGenerator = 60

// covers reports whether a finding of kind covers text[start:end].
func covers(findings []detect.Finding, kind string, start, end int) bool {
	for _, f := range findings {
		if f.Kind == kind && f.Start <= start && end <= f.End {
			return true
		}
	}
	return false
}

// TestRecall generates valid secrets of every provider family, embeds them
// in tool-output-like text, and requires the detector to find at least 95%
// of each family (the bar), overall and per family.
func TestRecall(t *testing.T) {
	d := Default()
	r := rand.New(rand.NewPCG(1, 2))
	type tally struct{ found, total int }
	byFamily := map[string]*tally{}
	var found, total int
	for _, g := range generators {
		tl := byFamily[g.family]
		if tl == nil {
			tl = &tally{}
			byFamily[g.family] = tl
		}
		misses := 0
		for range samplesPerGenerator {
			text, secret, at := g.sample(r)
			ok := covers(d.Scan(text, nil), g.kind, at, at+len(secret))
			tl.total++
			total++
			if ok {
				tl.found++
				found++
			} else if misses++; misses <= 2 {
				t.Logf("%s/%s missed in %q: %v", g.family, g.kind, text, d.Scan(text, nil))
			}
		}
	}
	families := make([]string, 0, len(byFamily))
	for f := range byFamily {
		families = append(families, f)
	}
	sort.Strings(families)
	for _, f := range families {
		if tl := byFamily[f]; float64(tl.found) < 0.95*float64(tl.total) {
			t.Errorf("family %s: recall %d/%d, below 0.95", f, tl.found, tl.total)
		}
	}
	recall := float64(found) / float64(total)
	t.Logf("recall %.4f (%d/%d) over %d families", recall, found, total, len(byFamily))
	if recall < 0.95 {
		t.Errorf("overall recall %.4f, below 0.95", recall)
	}
}

// TestGeneratorsCoverEveryRule: every family of the table has generated
// positives, and every single rule, alone, finds some of them, so no rule
// goes untested behind another one that matches the same samples.
func TestGeneratorsCoverEveryRule(t *testing.T) {
	genFamilies := map[string]bool{}
	for _, g := range generators {
		genFamilies[g.family+"/"+g.kind] = true
	}
	ruleFamilies := map[string]bool{}
	for _, rl := range rules {
		ruleFamilies[rl.family] = true
		if !genFamilies[rl.family+"/"+rl.kind] {
			t.Errorf("rule %s/%s has no generator", rl.family, rl.kind)
		}
	}
	for key := range genFamilies {
		found := false
		for _, rl := range rules {
			found = found || rl.family+"/"+rl.kind == key
		}
		if !found {
			t.Errorf("generator %s matches no rule", key)
		}
	}
	if len(ruleFamilies) < 100 {
		t.Errorf("%d provider families, want at least 100", len(ruleFamilies))
	}
	t.Logf("%d rules, %d kinds, %d families", len(rules), len(kindDescriptions), len(ruleFamilies))

	r := rand.New(rand.NewPCG(3, 4))
	for i, rl := range rules {
		single, err := newDetector([]rule{rl}, false)
		if err != nil {
			t.Fatal(err)
		}
		hits := 0
		for _, g := range generators {
			if g.family != rl.family || g.kind != rl.kind {
				continue
			}
			for range 20 {
				text, secret, at := g.sample(r)
				if covers(single.Scan(text, nil), g.kind, at, at+len(secret)) {
					hits++
				}
			}
		}
		if hits == 0 {
			t.Errorf("rule %d (%s/%s, keywords %v) finds none of the generated samples", i, rl.family, rl.kind, rl.keywords)
		}
	}
}

// TestKindsDescribeEveryRule: the exported list names every kind the rules
// report, and nothing else.
func TestKindsDescribeEveryRule(t *testing.T) {
	described := map[string]bool{}
	for _, k := range Kinds() {
		if described[k.Name] {
			t.Errorf("kind %s listed twice", k.Name)
		}
		described[k.Name] = true
		if k.Description == "" {
			t.Errorf("kind %s has no description", k.Name)
		}
		if k.Name != KindHighEntropy && len(k.Families) == 0 {
			t.Errorf("kind %s is reported by no rule", k.Name)
		}
	}
	for _, rl := range rules {
		if !described[rl.kind] {
			t.Errorf("rule kind %s is not in kindDescriptions", rl.kind)
		}
	}
	if !slices.ContainsFunc(Kinds(), func(k KindInfo) bool { return k.Name == KindHighEntropy && k.AuditOnly }) {
		t.Errorf("%s must be listed as audit-only", KindHighEntropy)
	}
}

// TestReadmeSnippetListsEveryKind keeps the proposed README text in step
// with Kinds.
func TestReadmeSnippetListsEveryKind(t *testing.T) {
	data, err := os.ReadFile("../../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range Kinds() {
		if !strings.Contains(string(data), "`"+k.Name+"`") {
			t.Errorf("README.md does not list kind %s", k.Name)
		}
	}
}
