package pii

import (
	"fmt"
	"math/rand/v2"
	"strings"
)

// Generators of valid and invalid values for the tests: random numbers
// with their check digits computed (or deliberately wrong).

type gen struct{ r *rand.Rand }

func newGen(seed uint64) *gen { return &gen{rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))} }

func (g *gen) digits(n int) string {
	b := make([]byte, n)
	for k := range b {
		b[k] = byte('0' + g.r.IntN(10))
	}
	return string(b)
}

// cardBrands: a prefix to start from and the length.
var cardBrands = map[string]struct {
	prefixes []string
	length   int
}{
	"visa16":     {[]string{"4"}, 16},
	"visa13":     {[]string{"4"}, 13},
	"visa19":     {[]string{"4"}, 19},
	"mc":         {[]string{"51", "52", "53", "54", "55"}, 16},
	"mc2":        {[]string{"2221", "2300", "2500", "2720"}, 16},
	"amex":       {[]string{"34", "37"}, 15},
	"discover":   {[]string{"6011", "644", "65"}, 16},
	"jcb":        {[]string{"3528", "3530", "3589"}, 16},
	"diners":     {[]string{"300", "305", "36", "38"}, 14},
	"unionpay":   {[]string{"62"}, 16},
	"unionpay19": {[]string{"62"}, 19},
	"maestro":    {[]string{"5018", "6304", "6759", "5893"}, 16},
	"mir":        {[]string{"2200", "2204"}, 16},
}

// card returns a Luhn-valid number of brand; valid=false makes the check
// digit wrong.
func (g *gen) card(brand string, valid bool) string {
	b, ok := cardBrands[brand]
	if !ok {
		panic("unknown card brand " + brand)
	}
	p := b.prefixes[g.r.IntN(len(b.prefixes))]
	body := p + g.digits(b.length-len(p)-1)
	check := luhnCheckDigit(body)
	if !valid {
		check = (check + 1 + g.r.IntN(9)) % 10
	}
	return body + string(rune('0'+check))
}

func luhnCheckDigit(body string) int {
	sum := 0
	for k := 0; k < len(body); k++ {
		d := int(body[len(body)-1-k] - '0')
		if k%2 == 0 {
			d *= 2
			if d > 9 {
				d -= 9
			}
		}
		sum += d
	}
	return (10 - sum%10) % 10
}

// groupCard writes a card number the way it is printed.
func groupCard(n string, sep string) string {
	if sep == "" {
		return n
	}
	var sizes []int
	switch len(n) {
	case 15:
		sizes = []int{4, 6, 5}
	case 14:
		sizes = []int{4, 6, 4}
	default:
		for rest := len(n); rest > 0; rest -= 4 {
			sizes = append(sizes, min(4, rest))
		}
	}
	var parts []string
	for _, s := range sizes {
		parts = append(parts, n[:s])
		n = n[s:]
	}
	return strings.Join(parts, sep)
}

// iban returns an IBAN of country cc with a random numeric BBAN (or one
// with the letters the country's banks use); valid=false makes the check
// digits wrong.
func (g *gen) iban(cc string, valid bool) string {
	n := ibanLength[cc]
	bban := g.digits(n - 4)
	switch cc { // countries whose BBAN starts with a bank code in letters
	case "GB", "IE", "NL", "BG", "GI", "LV", "MT", "RO", "QA":
		bban = g.letters(4) + bban[4:]
	}
	check := 98 - ibanMod(cc+"00"+bban)
	if !valid {
		check = (check-2+1+g.r.IntN(95))%97 + 2 // another value in 2..98
	}
	return fmt.Sprintf("%s%02d%s", cc, check, bban)
}

func (g *gen) letters(n int) string {
	b := make([]byte, n)
	for k := range b {
		b[k] = byte('A' + g.r.IntN(26))
	}
	return string(b)
}

// ibanMod returns the IBAN's value modulo 97.
func ibanMod(iban string) int {
	s := iban[4:] + iban[:4]
	mod := 0
	for k := 0; k < len(s); k++ {
		c := s[k]
		if isDigit(c) {
			mod = (mod*10 + int(c-'0')) % 97
		} else {
			mod = (mod*100 + int(c-'A') + 10) % 97
		}
	}
	return mod
}

func groupIBAN(iban string) string {
	var parts []string
	for len(iban) > 4 {
		parts = append(parts, iban[:4])
		iban = iban[4:]
	}
	return strings.Join(append(parts, iban), " ")
}

// ssn returns a number the SSA could have issued, or (valid=false) one it
// never issues: area 000, 666 or 9xx, group 00 or serial 0000.
func (g *gen) ssn(valid bool) string {
	area := 1 + g.r.IntN(899)
	if area == 666 {
		area = 665
	}
	group, serial := 1+g.r.IntN(99), 1+g.r.IntN(9999)
	if !valid {
		switch g.r.IntN(5) {
		case 0:
			area = 0
		case 1:
			area = 666
		case 2:
			area = 900 + g.r.IntN(100)
		case 3:
			group = 0
		default:
			serial = 0
		}
	}
	return fmt.Sprintf("%03d-%02d-%04d", area, group, serial)
}

func (g *gen) cpf(valid bool) string {
	d := []byte(g.digits(9))
	for _, n := range []int{9, 10} {
		sum := 0
		for k := range n {
			sum += int(d[k]-'0') * (n + 1 - k)
		}
		r := sum * 10 % 11 % 10
		d = append(d, byte('0'+r))
	}
	if !valid {
		d[10] = '0' + (d[10]-'0'+1)%10
	}
	s := string(d)
	return s[:3] + "." + s[3:6] + "." + s[6:9] + "-" + s[9:]
}

func (g *gen) dni(valid bool) string {
	n := g.r.IntN(100_000_000)
	for isDate(fmt.Sprintf("%08d", n)) { // documented exclusion, see isDate
		n = g.r.IntN(100_000_000)
	}
	l := dniLetters[n%23]
	if !valid {
		l = dniLetters[(n+1+g.r.IntN(22))%23]
	}
	return fmt.Sprintf("%08d%c", n, l)
}

func (g *gen) nie(valid bool) string {
	p := g.r.IntN(3)
	n := g.r.IntN(10_000_000)
	l := dniLetters[(p*10_000_000+n)%23]
	if !valid {
		l = dniLetters[(p*10_000_000+n+1+g.r.IntN(22))%23]
	}
	return fmt.Sprintf("%c%07d%c", "XYZ"[p], n, l)
}

func (g *gen) bsn(valid bool) string {
	for {
		d := g.digits(9)
		var a [9]byte
		copy(a[:], d)
		if elevenProof(a) == valid {
			return d
		}
	}
}

func (g *gen) aadhaar(valid bool) string {
	for {
		d := string(rune('2'+g.r.IntN(8))) + g.digits(11)
		if verhoeff([]byte(d)) == valid {
			return d[:4] + " " + d[4:8] + " " + d[8:]
		}
	}
}

// fiscalCode returns a codice fiscale (random name letters, a birth date,
// a place) with its check letter, right or (valid=false) wrong.
func (g *gen) fiscalCode(valid bool) string {
	cf := []byte(g.letters(6) + fmt.Sprintf("%02d", g.r.IntN(100)) +
		string("ABCDEHLMPRST"[g.r.IntN(12)]) +
		fmt.Sprintf("%02d", 1+g.r.IntN(31)+40*g.r.IntN(2)) +
		g.letters(1) + g.digits(3))
	sum := 0
	for k, c := range cf {
		v := int(c - 'A')
		if isDigit(c) {
			v = int(c - '0')
		}
		if k%2 == 0 {
			sum += fiscalOdd[v]
		} else {
			sum += v
		}
	}
	check := sum % 26
	if !valid {
		check = (check + 1 + g.r.IntN(25)) % 26
	}
	return string(append(cf, byte('A'+check)))
}
