package pii

import (
	"flag"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/mcpgate/mcpgate/internal/detect"
)

// testdata/labelled.txt holds one sample per line (blank lines and lines
// starting with "#" are skipped). Each expected finding is marked
// ⟦kind:value⟧ in the line; the markers are removed to make the text that
// is scanned. Everything unmarked must not be reported.
//
// A value may be written «generator args» (see fillValue); go test -run
// TestLabelled -fill replaces each with a generated value, so that
// numbers with check digits can be added without computing them by hand.

var fillFlag = flag.Bool("fill", false, "replace «generator» placeholders in testdata/labelled.txt with generated values")

const (
	markOpen  = "⟦"
	markClose = "⟧"
)

type sample struct {
	line int
	text string
	want []detect.Finding
}

func parseSample(line string) (sample, error) {
	var s sample
	var b strings.Builder
	for {
		open := strings.Index(line, markOpen)
		if open < 0 {
			break
		}
		b.WriteString(line[:open])
		line = line[open+len(markOpen):]
		end := strings.Index(line, markClose)
		kind, value, ok := strings.Cut(line[:max(end, 0)], ":")
		if end < 0 || !ok || value == "" {
			return s, fmt.Errorf("marker %q: want ⟦kind:value⟧", line)
		}
		if !slices.ContainsFunc(kinds, func(k Kind) bool { return k.Name == kind }) {
			return s, fmt.Errorf("marker %q: unknown kind %q", line[:end], kind)
		}
		s.want = append(s.want, detect.Finding{Kind: kind, Start: b.Len(), End: b.Len() + len(value)})
		b.WriteString(value)
		line = line[end+len(markClose):]
	}
	b.WriteString(line)
	s.text = b.String()
	return s, nil
}

func loadSamples(t *testing.T, path string) []sample {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var samples []sample
	for n, line := range strings.Split(string(data), "\n") {
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if strings.Contains(line, "«") {
			t.Fatalf("%s:%d: unfilled placeholder; run go test -run TestLabelled -fill", path, n+1)
		}
		s, err := parseSample(line)
		if err != nil {
			t.Fatalf("%s:%d: %v", path, n+1, err)
		}
		s.line = n + 1
		samples = append(samples, s)
	}
	return samples
}

type score struct{ tp, fp, fn int }

func (s score) precision() float64 { return ratio(s.tp, s.tp+s.fp) }
func (s score) recall() float64    { return ratio(s.tp, s.tp+s.fn) }

// f2 weighs recall twice as much as precision: a missed card leaks, a
// redacted order number only annoys.
func (s score) f2() float64 {
	p, r := s.precision(), s.recall()
	if p+r == 0 {
		return 0
	}
	return 5 * p * r / (4*p + r)
}

func ratio(a, b int) float64 {
	if b == 0 {
		return 1
	}
	return float64(a) / float64(b)
}

// evaluate scans every sample and scores each kind: a finding counts only
// if kind, start and end all match a label.
func evaluate(d *Detector, samples []sample) (scores map[string]*score, mismatches []string) {
	scores = make(map[string]*score)
	for _, k := range kinds {
		scores[k.Name] = &score{}
	}
	for _, s := range samples {
		got := d.Scan(s.text, nil)
		for _, f := range got {
			if slices.Contains(s.want, f) {
				scores[f.Kind].tp++
			} else {
				scores[f.Kind].fp++
				mismatches = append(mismatches, fmt.Sprintf("line %d: false %s %q in %q", s.line, f.Kind, s.text[f.Start:f.End], s.text))
			}
		}
		for _, w := range s.want {
			if !slices.Contains(got, w) {
				scores[w.Kind].fn++
				mismatches = append(mismatches, fmt.Sprintf("line %d: missed %s %q in %q", s.line, w.Kind, s.text[w.Start:w.End], s.text))
			}
		}
	}
	return scores, mismatches
}

// minF2 is the floor per kind. The issue sets 0.98 for cards, IBAN, e-mail,
// IP and SSN; the others have a floor that only guards against regressions
// (see the measured figures in the README snippet).
var minF2 = map[string]float64{
	"credit_card": 0.98, "iban": 0.98, "email": 0.98, "ipv4": 0.98, "ipv6": 0.98, "us_ssn": 0.98,
	"phone": 0.90, "es_dni": 0.95, "it_fiscal_code": 0.95, "br_cpf": 0.95, "nl_bsn": 0.95, "in_aadhaar": 0.95,
}

// minPositives keeps the scores meaningful: each kind has at least this
// many labelled findings.
const minPositives = 8

func TestLabelled(t *testing.T) {
	const path = "testdata/labelled.txt"
	if *fillFlag {
		fillFile(t, path)
	}
	samples := loadSamples(t, path)
	scores, mismatches := evaluate(Default(), samples)
	for _, m := range mismatches {
		t.Log(m)
	}
	t.Logf("%d samples", len(samples))
	t.Logf("%-15s %5s %5s %5s %9s %7s %7s", "kind", "tp", "fp", "fn", "precision", "recall", "F2")
	for _, k := range kinds {
		s := scores[k.Name]
		t.Logf("%-15s %5d %5d %5d %9.3f %7.3f %7.3f", k.Name, s.tp, s.fp, s.fn, s.precision(), s.recall(), s.f2())
		if s.tp+s.fn < minPositives {
			t.Errorf("%s: %d labelled findings, want at least %d", k.Name, s.tp+s.fn, minPositives)
		}
		if s.f2() < minF2[k.Name] {
			t.Errorf("%s: F2 %.3f, want at least %.2f", k.Name, s.f2(), minF2[k.Name])
		}
	}
}

// fillFile replaces each «generator args» in path (outside comments) by a
// generated value.
func fillFile(t *testing.T, path string) {
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	g := newGen(uint64(len(data)))
	lines := strings.Split(string(data), "\n")
	for n, line := range lines {
		if strings.HasPrefix(line, "#") {
			continue
		}
		var b strings.Builder
		for {
			open := strings.Index(line, "«")
			if open < 0 {
				break
			}
			end := strings.Index(line[open:], "»")
			if end < 0 {
				t.Fatalf("%s:%d: unclosed «", path, n+1)
			}
			b.WriteString(line[:open])
			spec := line[open+len("«") : open+end]
			v, err := fillValue(g, strings.Fields(spec))
			if err != nil {
				t.Fatalf("%s:%d: «%s»: %v", path, n+1, spec, err)
			}
			b.WriteString(v)
			line = line[open+end+len("»"):]
		}
		b.WriteString(line)
		lines[n] = b.String()
	}
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")), 0o644); err != nil {
		t.Fatal(err)
	}
}

// fillValue generates the value «name args» stands for. A "bad" prefix
// makes the check digits wrong.
func fillValue(g *gen, spec []string) (string, error) {
	if len(spec) == 0 {
		return "", fmt.Errorf("empty placeholder")
	}
	name, valid := spec[0], true
	if rest, ok := strings.CutPrefix(name, "bad"); ok {
		name, valid = rest, false
	}
	arg := func(k int) string {
		if k < len(spec) {
			return spec[k]
		}
		return ""
	}
	seps := map[string]string{"": "", "space": " ", "dash": "-"}
	switch name {
	case "card":
		if _, ok := cardBrands[arg(1)]; !ok {
			return "", fmt.Errorf("unknown brand %q", arg(1))
		}
		return groupCard(g.card(arg(1), valid), seps[arg(2)]), nil
	case "iban":
		if ibanLength[arg(1)] == 0 {
			return "", fmt.Errorf("unknown country %q", arg(1))
		}
		v := g.iban(arg(1), valid)
		if arg(2) == "space" {
			v = groupIBAN(v)
		}
		return v, nil
	case "ssn":
		v := g.ssn(valid)
		switch arg(1) {
		case "bare":
			v = strings.ReplaceAll(v, "-", "")
		case "space":
			v = strings.ReplaceAll(v, "-", " ")
		}
		return v, nil
	case "cpf":
		v := g.cpf(valid)
		if arg(1) == "bare" {
			v = strings.NewReplacer(".", "", "-", "").Replace(v)
		}
		return v, nil
	case "dni":
		return g.dni(valid), nil
	case "nie":
		return g.nie(valid), nil
	case "cf":
		return g.fiscalCode(valid), nil
	case "bsn":
		return g.bsn(valid), nil
	case "aadhaar":
		v := g.aadhaar(valid)
		switch arg(1) {
		case "bare":
			v = strings.ReplaceAll(v, " ", "")
		case "dash":
			v = strings.ReplaceAll(v, " ", "-")
		}
		return v, nil
	case "digits":
		var n int
		fmt.Sscan(arg(1), &n)
		return g.digits(n), nil
	}
	return "", fmt.Errorf("unknown generator %q", name)
}
