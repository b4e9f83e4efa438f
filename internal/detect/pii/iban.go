package pii

// IBANs (ISO 13616): a country code, two check digits and the national
// account number (BBAN), as the bank prints it (groups of four separated
// by single spaces) or as it travels electronically (no spaces). The
// length is fixed per country, and the whole must be 1 modulo 97: a random
// string of the right shape passes one time in 97.

// ibanLength maps a country code to its IBAN length, from the SWIFT IBAN
// registry: every SEPA country and the other registered ones.
var ibanLength = map[string]int{
	"AD": 24, "AE": 23, "AL": 28, "AT": 20, "AZ": 28, "BA": 20, "BE": 16,
	"BG": 22, "BH": 22, "BI": 27, "BR": 29, "BY": 28, "CH": 21, "CR": 22,
	"CY": 28, "CZ": 24, "DE": 22, "DJ": 27, "DK": 18, "DO": 28, "EE": 20,
	"EG": 29, "ES": 24, "FI": 18, "FK": 18, "FO": 18, "FR": 27, "GB": 22,
	"GE": 22, "GI": 23, "GL": 18, "GR": 27, "GT": 28, "HN": 28, "HR": 21,
	"HU": 28, "IE": 22, "IL": 23, "IQ": 23, "IS": 26, "IT": 27, "JO": 30,
	"KW": 30, "KZ": 20, "LB": 28, "LC": 32, "LI": 21, "LT": 20, "LU": 20,
	"LV": 21, "LY": 25, "MC": 27, "MD": 24, "ME": 22, "MK": 19, "MN": 20,
	"MR": 27, "MT": 31, "MU": 30, "NI": 28, "NL": 18, "NO": 15, "OM": 23,
	"PK": 24, "PL": 28, "PS": 29, "PT": 25, "QA": 29, "RO": 24, "RS": 22,
	"RU": 33, "SA": 24, "SC": 31, "SD": 18, "SE": 24, "SI": 19, "SK": 24,
	"SM": 27, "SO": 23, "ST": 25, "SV": 28, "TL": 23, "TN": 24, "TR": 26,
	"UA": 29, "VA": 22, "VG": 24, "XK": 20, "YE": 30,
}

// ibanLengths is ibanLength as a table indexed by the two letters, so that
// the scan's hot path does no map lookup.
var ibanLengths = func() (t [26][26]uint8) {
	for cc, n := range ibanLength {
		t[cc[0]-'A'][cc[1]-'A'] = uint8(n)
	}
	return t
}()

const maxIBAN = 34

// matchIBAN returns the end of the IBAN that starts at i, or -1 and, if
// the text there is written like an IBAN but fails the check, the end of
// that shape.
func matchIBAN(s string, i int) (end, shape int) {
	if i+4 > len(s) || !isUpper(s[i+1]) || !isDigit(s[i+2]) || !isDigit(s[i+3]) {
		return -1, 0
	}
	n := int(ibanLengths[s[i]-'A'][s[i+1]-'A'])
	if n == 0 {
		return -1, 0
	}
	var iban [maxIBAN]byte
	// Electronic form: n characters in one word.
	if j := i + n; j <= len(s) && !isAlnum(byteAt(s, j)) {
		copy(iban[:], s[i:j])
		if validIBAN(iban[:n]) {
			return j, 0
		}
		shape = j
	}
	// Print form: groups of four separated by one space, the last shorter.
	j, k := i, 0
	for k < n {
		if k > 0 && k%4 == 0 {
			if byteAt(s, j) != ' ' {
				return -1, shape
			}
			j++
		}
		c := byteAt(s, j)
		if !isUpper(c) && !isDigit(c) {
			return -1, shape
		}
		iban[k] = c
		j++
		k++
	}
	if isAlnum(byteAt(s, j)) {
		return -1, shape
	}
	if !validIBAN(iban[:n]) {
		return -1, j
	}
	return j, 0
}

// validIBAN reports whether iban (upper-case letters and digits, country
// code first) has check digits 02-98 and is 1 modulo 97, computed as ISO
// 13616 says: the first four characters moved to the end, each letter
// replaced by its value 10-35.
func validIBAN(iban []byte) bool {
	check := int(iban[2]-'0')*10 + int(iban[3]-'0')
	if check < 2 || check > 98 {
		return false
	}
	mod := 0
	add := func(c byte) bool {
		switch {
		case isDigit(c):
			mod = (mod*10 + int(c-'0')) % 97
		case isUpper(c):
			mod = (mod*100 + int(c-'A') + 10) % 97
		default:
			return false
		}
		return true
	}
	for _, c := range iban[4:] {
		if !add(c) {
			return false
		}
	}
	for _, c := range iban[:4] {
		add(c)
	}
	return mod == 1
}
