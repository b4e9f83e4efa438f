package pii

import (
	"fmt"
	"slices"
	"strings"

	"github.com/mcpgate/mcpgate/internal/detect"
)

// kindID indexes kinds; a detector keeps the enabled ones as a bit set.
type kindID uint8

const (
	kindEmail kindID = iota
	kindPhone
	kindCard
	kindIBAN
	kindIPv4
	kindIPv6
	kindSSN
	kindDNI
	kindFiscalCode
	kindCPF
	kindBSN
	kindAadhaar
)

// Kind is one kind of personal data the detector reports.
type Kind struct {
	Name        string // stable, lower snake case: the <kind> of [REDACTED:<kind>]
	Description string // one line, for documentation
}

// kinds is indexed by kindID. The names are stable: they appear in
// [REDACTED:<kind>] and in audit records, so a rename breaks operators'
// filters.
var kinds = []Kind{
	{"email", "e-mail address (local@domain.tld)"},
	{"phone", "phone number: international (+CC …), North American, or national with a trunk 0, written with separators"},
	{"credit_card", "payment card number: Luhn-valid, in a known issuer range (Visa, Mastercard, Amex, Discover, JCB, Diners, UnionPay, Maestro)"},
	{"iban", "IBAN: known country, that country's length, mod-97 check"},
	{"ipv4", "IPv4 address (public ones, see Options.AllIPs)"},
	{"ipv6", "IPv6 address (public ones, see Options.AllIPs)"},
	{"us_ssn", "US Social Security number: AAA-GG-SSSS, or bare digits after a keyword such as \"SSN\""},
	{"es_dni", "Spanish DNI or NIE with its check letter"},
	{"it_fiscal_code", "Italian codice fiscale with its check character"},
	{"br_cpf", "Brazilian CPF with its two check digits (bare digits only after \"CPF\")"},
	{"nl_bsn", "Dutch BSN, 11-proof, after a keyword such as \"BSN\""},
	{"in_aadhaar", "Indian Aadhaar number, Verhoeff check (bare digits only after \"Aadhaar\")"},
}

// Kinds returns every kind the detector can report, in a stable order.
func Kinds() []Kind { return slices.Clone(kinds) }

// Options configures a Detector. The zero value is the default.
type Options struct {
	// Kinds limits the scan to the kinds named (see Kinds). Nil or empty
	// means every kind.
	Kinds []string

	// AllIPs reports every valid IP address. By default only addresses
	// that could be a person's are: not the special-purpose ranges
	// (loopback, private, unique local, link-local, shared 100.64/10,
	// documentation, benchmarking, multicast, reserved, unspecified), which
	// name a machine on someone's own network and fill tool output
	// (127.0.0.1, 10.0.0.5, ::1); not a dotted quad of numbers below 32
	// (1.2.3.4, 8.8.8.8, 4.2.11.2), which in text is a section, version or
	// OID number, an example or a public resolver far more often than
	// anybody's address; and not a network address, an IPv4 address ending
	// in .0 or an IPv6 address whose interface identifier is zero
	// (2001:4860::).
	AllIPs bool
}

// Detector finds personal data in text. It is safe for concurrent use; it
// keeps no state between calls and compiles nothing.
type Detector struct {
	on     uint32 // bit kindID set: the kind is reported
	allIPs bool
}

var _ detect.Detector = (*Detector)(nil)

// New returns a detector configured by opts, or an error naming a kind in
// opts.Kinds that does not exist.
func New(opts Options) (*Detector, error) {
	d := &Detector{allIPs: opts.AllIPs}
	if len(opts.Kinds) == 0 {
		d.on = 1<<len(kinds) - 1
	}
	for _, name := range opts.Kinds {
		id := slices.IndexFunc(kinds, func(k Kind) bool { return k.Name == name })
		if id < 0 {
			names := make([]string, len(kinds))
			for i, k := range kinds {
				names[i] = k.Name
			}
			return nil, fmt.Errorf("pii: Options.Kinds: unknown kind %q (use one of: %s)", name, strings.Join(names, ", "))
		}
		d.on |= 1 << id
	}
	return d, nil
}

func (d *Detector) enabled(k kindID) bool { return d.on&(1<<k) != 0 }

// finding makes the finding of kind k at text[start:end].
func finding(k kindID, start, end int) detect.Finding {
	return detect.Finding{Kind: kinds[k].Name, Start: start, End: end}
}

var defaultDetector, _ = New(Options{})

// Default returns the detector for every kind with default options.
func Default() *Detector { return defaultDetector }

// Scan appends the personal data found in text to dst, ordered by Start,
// without overlaps.
func (d *Detector) Scan(text string, dst []detect.Finding) []detect.Finding {
	// Prefilter: every kind needs an '@' (email), a ':' (IPv6) or a digit.
	// Each scan below runs only when its trigger byte is present, so text
	// without any of them costs three fast byte searches.
	first := len(dst)
	if d.enabled(kindEmail) && strings.IndexByte(text, '@') >= 0 {
		dst = d.scanEmails(text, dst)
	}
	if d.enabled(kindIPv6) && strings.IndexByte(text, ':') >= 0 {
		dst = d.scanIPv6(text, dst)
	}
	if d.on&^(1<<kindEmail|1<<kindIPv6) != 0 {
		if i := indexDigit(text); i >= 0 {
			// No number-led kind starts more than tokenLead bytes before
			// its first digit (the six letters of a codice fiscale).
			dst = d.scanTokens(text, max(0, i-tokenLead), dst)
		}
	}
	return resolveOverlaps(dst, first)
}

// resolveOverlaps sorts dst[first:] by Start and, where findings overlap,
// keeps the longer one (the earlier one on a tie). The three scans each
// return ordered, disjoint findings, so overlaps are rare: an address
// inside an e-mail's domain, an IPv4 tail inside an IPv6 address.
func resolveOverlaps(dst []detect.Finding, first int) []detect.Finding {
	found := dst[first:]
	if len(found) < 2 {
		return dst
	}
	slices.SortFunc(found, func(a, b detect.Finding) int {
		if a.Start != b.Start {
			return a.Start - b.Start
		}
		return b.End - a.End
	})
	kept := found[:1]
	for _, f := range found[1:] {
		last := &kept[len(kept)-1]
		switch {
		case f.Start >= last.End:
			kept = append(kept, f)
		case f.End-f.Start > last.End-last.Start:
			*last = f
		}
	}
	return dst[:first+len(kept)]
}
