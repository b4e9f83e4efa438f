package pii

import (
	"os"
	"strings"
	"testing"
)

// FuzzScan checks the contract on any input: no panic, findings inside the
// text, ordered and disjoint, of a listed kind; and the validation promise:
// no card that fails Luhn, no IBAN that fails mod 97.
func FuzzScan(f *testing.F) {
	if data, err := os.ReadFile("testdata/labelled.txt"); err == nil {
		for _, line := range strings.Split(string(data), "\n") {
			if s, err := parseSample(line); err == nil && s.text != "" && !strings.HasPrefix(line, "#") {
				f.Add(s.text)
			}
		}
	}
	f.Add("(+44) 20 7946 0958 ::ffff:8.8.8.8 a@b.cd 4111 1111 1111 1111 123")
	all, _ := New(Options{AllIPs: true})
	detectors := []*Detector{Default(), all}
	f.Fuzz(func(t *testing.T, text string) {
		for _, d := range detectors {
			end := 0
			for _, fd := range d.Scan(text, nil) {
				if fd.Start < end || fd.End <= fd.Start || fd.End > len(text) {
					t.Fatalf("finding %+v out of order or bounds (previous end %d, len %d) in %q", fd, end, len(text), text)
				}
				end = fd.End
				id := -1
				for k, kind := range kinds {
					if kind.Name == fd.Kind {
						id = k
					}
				}
				if id < 0 {
					t.Fatalf("finding %+v: unknown kind", fd)
				}
				v := text[fd.Start:fd.End]
				switch fd.Kind {
				case "credit_card":
					if !luhnValid(v) {
						t.Fatalf("Luhn-invalid card %q reported in %q", v, text)
					}
				case "iban":
					if ibanMod(strings.ReplaceAll(v, " ", "")) != 1 {
						t.Fatalf("mod-97-invalid IBAN %q reported in %q", v, text)
					}
				}
			}
		}
	})
}
