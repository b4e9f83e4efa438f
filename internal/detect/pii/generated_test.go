package pii

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/mcpgate/mcpgate/internal/detect"
)

// Generated samples: many random valid numbers must each be found, exactly;
// their invalid twins (same shape, wrong check) must never be reported.

// contexts are the texts a value is embedded in (%s is the value).
var contexts = []string{
	"%s",
	"value: %s.",
	`{"value":"%s","n":1}`,
	"paid with %s on 2024-05-01 at 10:22",
	"row 17,%s,EUR\n",
	"(%s)",
	"ref:\t%s\tok",
	"Kunde: %s; Betrag 12,50",
}

// checkGenerated scans make(valid) and make(invalid) in random contexts:
// the valid value must be the only finding, of kind; the invalid one must
// not be reported as kind. (For cards, the caller's check allows a valid
// card inside the invalid value: 4-4-4-4-3 can be a card and its CVV.)
func checkGenerated(t *testing.T, g *gen, kind string, n int, make func(valid bool) string) {
	checkGeneratedPart(t, g, kind, n, make, nil)
}

// checkGeneratedPart is checkGenerated where a finding of kind inside an
// invalid value is allowed if part(finding) is true.
func checkGeneratedPart(t *testing.T, g *gen, kind string, n int, make func(valid bool) string, part func(string) bool) {
	t.Helper()
	d := Default()
	found, rejected := 0, 0
	for range n {
		ctx := contexts[g.r.IntN(len(contexts))]
		v := make(true)
		text := fmt.Sprintf(ctx, v)
		start := strings.Index(text, v)
		want := []detect.Finding{{Kind: kind, Start: start, End: start + len(v)}}
		if got := d.Scan(text, nil); !slices.Equal(got, want) {
			t.Errorf("valid %s %q in %q: got %v, want %v", kind, v, text, got, want)
		} else {
			found++
		}
		bad := make(false)
		text = fmt.Sprintf(ctx, bad)
		if got := d.Scan(text, nil); slices.ContainsFunc(got, func(f detect.Finding) bool {
			return f.Kind == kind && (part == nil || !part(text[f.Start:f.End]))
		}) {
			t.Errorf("invalid %s %q in %q: reported %v", kind, bad, text, got)
		} else {
			rejected++
		}
	}
	t.Logf("%s: %d/%d valid found, %d/%d invalid rejected", kind, found, n, rejected, n)
}

func TestGeneratedCards(t *testing.T) {
	g := newGen(1)
	brands := make([]string, 0, len(cardBrands))
	for b := range cardBrands {
		brands = append(brands, b)
	}
	slices.Sort(brands)
	for _, brand := range brands {
		for _, sep := range []string{"", " ", "-"} {
			t.Run(fmt.Sprintf("%s/%q", brand, sep), func(t *testing.T) {
				checkGeneratedPart(t, g, "credit_card", 200, func(valid bool) string {
					return groupCard(g.card(brand, valid), sep)
				}, luhnValid)
			})
		}
	}
}

func TestGeneratedIBANs(t *testing.T) {
	g := newGen(2)
	countries := make([]string, 0, len(ibanLength))
	for cc := range ibanLength {
		countries = append(countries, cc)
	}
	slices.Sort(countries)
	for _, cc := range countries {
		for _, spaced := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/spaced=%v", cc, spaced), func(t *testing.T) {
				checkGenerated(t, g, "iban", 50, func(valid bool) string {
					v := g.iban(cc, valid)
					if spaced {
						v = groupIBAN(v)
					}
					return v
				})
			})
		}
	}
}

func TestGeneratedIDs(t *testing.T) {
	g := newGen(3)
	for _, c := range []struct {
		kind string
		make func(valid bool) string
	}{
		{"us_ssn", g.ssn},
		{"br_cpf", g.cpf},
		{"es_dni", g.dni},
		{"es_dni", g.nie},
		{"it_fiscal_code", g.fiscalCode},
		{"in_aadhaar", g.aadhaar},
		{"nl_bsn", func(valid bool) string { return "BSN " + g.bsn(valid) }},
	} {
		t.Run(c.kind, func(t *testing.T) {
			if c.kind == "nl_bsn" {
				// The keyword is part of the value here; check the number.
				d := Default()
				for range 500 {
					v := g.bsn(true)
					text := "BSN: " + v
					if got := d.Scan(text, nil); !slices.Equal(got, []detect.Finding{{Kind: "nl_bsn", Start: 5, End: 14}}) {
						t.Errorf("valid BSN in %q: got %v", text, got)
					}
					text = "BSN: " + g.bsn(false)
					if got := d.Scan(text, nil); len(got) != 0 {
						t.Errorf("invalid BSN in %q: got %v", text, got)
					}
				}
				return
			}
			checkGenerated(t, g, c.kind, 1000, c.make)
		})
	}
}

// TestNoInvalidReported is the hard requirement: among many random
// card-shaped and IBAN-shaped strings (most with wrong check digits), no
// Luhn-invalid card and no mod-97-invalid IBAN is ever reported, and every
// valid IBAN is.
func TestNoInvalidReported(t *testing.T) {
	g := newGen(4)
	d := Default()
	var cards, ibans, validIBANs int
	for range 20000 {
		// A random number of card length with a card-like prefix.
		n := 13 + g.r.IntN(7)
		prefix := []string{"4", "5", "34", "37", "6011", "62", "35", "36", "2221"}[g.r.IntN(9)]
		num := prefix + g.digits(n-len(prefix))
		text := fmt.Sprintf(contexts[g.r.IntN(len(contexts))], groupCard(num, []string{"", " ", "-"}[g.r.IntN(3)]))
		for _, f := range d.Scan(text, nil) {
			if f.Kind == "credit_card" {
				cards++
				if !luhnValid(text[f.Start:f.End]) {
					t.Fatalf("Luhn-invalid card reported: %q in %q", text[f.Start:f.End], text)
				}
			}
		}
		// A random IBAN-shaped string: known country, right length, random
		// check digits.
		ccs := []string{"DE", "FR", "GB", "NL", "IT", "ES", "PL", "CH", "NO", "MT"}
		cc := ccs[g.r.IntN(len(ccs))]
		iban := fmt.Sprintf("%s%02d%s", cc, 2+g.r.IntN(97), g.digits(ibanLength[cc]-4))
		valid := ibanMod(iban) == 1
		if valid {
			validIBANs++
		}
		if g.r.IntN(2) == 0 {
			iban = groupIBAN(iban)
		}
		text = fmt.Sprintf(contexts[g.r.IntN(len(contexts))], iban)
		reported := false
		for _, f := range d.Scan(text, nil) {
			if f.Kind == "iban" {
				reported = true
				ibans++
				if ibanMod(strings.ReplaceAll(text[f.Start:f.End], " ", "")) != 1 {
					t.Fatalf("mod-97-invalid IBAN reported: %q in %q", text[f.Start:f.End], text)
				}
			}
		}
		if reported != valid {
			t.Errorf("IBAN %q (valid=%v) in %q: reported=%v", iban, valid, text, reported)
		}
	}
	t.Logf("20000 random card-shaped numbers: %d reported, all Luhn-valid; 20000 random IBAN-shaped: %d reported, %d valid", cards, ibans, validIBANs)
}

// luhnValid checks a card number as written (spaces, dashes) with the
// test's own Luhn code.
func luhnValid(card string) bool {
	digits := strings.NewReplacer(" ", "", "-", "").Replace(card)
	return len(digits) > 1 && luhnCheckDigit(digits[:len(digits)-1]) == int(digits[len(digits)-1]-'0')
}
