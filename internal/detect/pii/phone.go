package pii

// Phone numbers, in three written forms, each with separators (a bare run
// of digits is an id as often as a phone number, so it is not reported
// unless it starts with '+'):
//
//   - international: '+', a country code, then groups separated by single
//     spaces, dashes or dots, or parentheses: +44 20 7946 0958,
//     +1 (415) 555-2671, +49 (0)30 1234567, +14155552671;
//   - North American: (415) 555-2671, 415-555-2671, 415.555.2671,
//     1-800-555-0199, with valid area and exchange codes;
//   - national, with a trunk 0: 020 7946 0958, 01 23 45 67 89,
//     01.23.45.67.89, (02) 9876 5432, 03-1234-5678, 030/1234567.
//
// Dates, times, versions, addresses, prices and ids are kept out by the
// shapes (consistent separators, group sizes, digit counts: E.164 allows
// 8 to 15 digits with the country code) and by the boundaries: a number
// glued to a word, a decimal point or a longer dashed id is not a phone.
// Not reported: local numbers without an area code (555-1234), numbers
// written with the "00" international prefix, vanity numbers
// (1-800-FLOWERS), bare national digits (4155552671).

// matchIntlPhone returns the end of the international number that starts
// at s[i] with '+' (or "(+", the country code in parentheses), or -1.
func matchIntlPhone(s string, i int) int {
	j := i + 1
	ccInParens := s[i] == '('
	if ccInParens {
		if byteAt(s, j) != '+' {
			return -1
		}
		j++
	}
	if c := byteAt(s, j); !isDigit(c) || c == '0' {
		return -1
	}
	var groups [12]int // digit counts; a trunk "(0)" is not counted
	n, digits, singles, end := 0, 0, 0, -1
	var number [15]byte
	for n < len(groups) {
		paren := byteAt(s, j) == '('
		if paren {
			j++
		}
		closing := paren || (ccInParens && n == 0)
		k := digitsEnd(s, j)
		if k == j || (closing && byteAt(s, k) != ')') {
			break
		}
		g := k - j
		trunk := paren && g == 1 && s[j] == '0'
		if !trunk {
			if digits+g > len(number) {
				return -1
			}
			copy(number[digits:], s[j:k])
			digits += g
			groups[n] = g
			n++
			if g == 1 && n > 1 {
				singles++
			}
		}
		if closing {
			k++
		}
		j, end = k, k
		c := byteAt(s, j)
		if c == '(' || (closing && isDigit(c)) { // "+44 (0)20", "(0)20"
			continue
		}
		if (c == ' ' || c == '-' || c == '.') && (isDigit(byteAt(s, j+1)) || byteAt(s, j+1) == '(') {
			j++
			continue
		}
		break
	}
	if end < 0 || !numberEndOK(s, end) || singles > 1 {
		return -1
	}
	cc := countryCodeLen(number[:digits])
	switch {
	case cc == 0, ccInParens && (n == 1 || groups[0] != cc):
		return -1
	case n == 1: // E.164 written whole: +14155552671
		if digits < 10 {
			return -1
		}
	case groups[0] != cc || digits < 8:
		return -1
	}
	for _, g := range groups[1:n] {
		if g > 12 {
			return -1
		}
	}
	return end
}

// countryCodeLen returns the length of the E.164 country code that starts
// number, or 0 if none does. Country codes are prefix-free.
func countryCodeLen(number []byte) int {
	if len(number) < 3 {
		return 0
	}
	d1, d2 := number[0]-'0', number[1]-'0'
	if d1 == 1 || d1 == 7 {
		return 1
	}
	switch zoneOf[d1][d2] {
	case 2:
		return 2
	case 3:
		return 3
	}
	return 0
}

// zoneOf[a][b] says how long a country code starting with digits a, b is:
// 2, 3, or 0 for unassigned (ITU-T E.164 assignments).
var zoneOf = func() (t [10][10]uint8) {
	for _, cc := range []int{20, 27, 30, 31, 32, 33, 34, 36, 39, 40, 41, 43,
		44, 45, 46, 47, 48, 49, 51, 52, 53, 54, 55, 56, 57, 58, 60, 61, 62,
		63, 64, 65, 66, 81, 82, 84, 86, 90, 91, 92, 93, 94, 95, 98} {
		t[cc/10][cc%10] = 2
	}
	for _, zone := range []int{21, 22, 23, 24, 25, 26, 29, 35, 37, 38, 42,
		50, 59, 67, 68, 69, 80, 85, 87, 88, 96, 97, 99} {
		t[zone/10][zone%10] = 3
	}
	return t
}()

// matchNANP returns the end of the North American number that starts at
// s[i] (a digit or '('), or -1.
func matchNANP(s string, i int) int {
	j := i
	if continuesGroups(s, i, byteAt(s, digitsEnd(s, i))) {
		return -1
	}
	if s[j] == '1' && isPhoneSep(byteAt(s, j+1)) && (isDigit(byteAt(s, j+2)) || byteAt(s, j+2) == '(') {
		j += 2 // "1-800-…", "1 (800) …"
	}
	var area, exchange int
	var sep byte
	if byteAt(s, j) == '(' {
		area = j + 1
		if digitsEnd(s, area) != area+3 || byteAt(s, area+3) != ')' {
			return -1
		}
		j = area + 4
		if byteAt(s, j) == ' ' {
			j++
		}
		exchange = j
		if digitsEnd(s, exchange) != exchange+3 {
			return -1
		}
		j = exchange + 3
		sep = byteAt(s, j)
		if !isPhoneSep(sep) {
			return -1
		}
	} else {
		area = j
		if digitsEnd(s, area) != area+3 {
			return -1
		}
		sep = byteAt(s, area+3)
		if !isPhoneSep(sep) {
			return -1
		}
		exchange = area + 4
		if digitsEnd(s, exchange) != exchange+3 || byteAt(s, exchange+3) != sep {
			return -1
		}
		j = exchange + 3
	}
	line := j + 1
	end := digitsEnd(s, line)
	if end != line+4 || !numberEndOK(s, end) {
		return -1
	}
	if !nanpCode(s[area:area+3], true) || !nanpCode(s[exchange:exchange+3], false) {
		return -1
	}
	return end
}

func isPhoneSep(c byte) bool { return c == '-' || c == '.' || c == ' ' }

func isTrunkSep(c byte) bool { return c == ' ' || c == '-' || c == '.' || c == '/' }

// nanpCode reports whether code is a valid area code (area) or exchange:
// NXX, N being 2-9, not N11 (service codes like 911), and for an area
// code no 9 in the middle (reserved).
func nanpCode(code string, area bool) bool {
	if code[0] < '2' || (code[1] == '1' && code[2] == '1') {
		return false
	}
	return !area || code[1] != '9'
}

// matchTrunkPhone returns the end of the national number that starts at
// s[i] with its trunk 0 ("020 …", "(020) …", "030/…"), or -1: 10 or 11
// digits in 2 to 5 groups of at least two, one kind of separator after the
// area code.
func matchTrunkPhone(s string, i int) int {
	j := i
	paren := s[j] == '('
	if paren {
		j++
	}
	if byteAt(s, j) != '0' || !isDigit(byteAt(s, j+1)) || s[j+1] == '0' {
		return -1
	}
	k := digitsEnd(s, j)
	if k-j < 2 || k-j > 5 {
		return -1
	}
	digits, groups := k-j, 1
	pairs := k-j == 2 // every group two digits, as in France: 01 23 45 67 89
	var sep byte
	if paren {
		if byteAt(s, k) != ')' {
			return -1
		}
		k++
		if byteAt(s, k) == ' ' {
			k++
		}
		if !isDigit(byteAt(s, k)) {
			return -1
		}
	} else {
		sep = byteAt(s, k)
		if !isTrunkSep(sep) || !isDigit(byteAt(s, k+1)) || continuesGroups(s, i, sep) {
			return -1
		}
		if sep == '/' { // "030/1234567", "030/123 456 78": the area code apart
			sep = 0
		}
		k++
	}
	for {
		e := digitsEnd(s, k)
		if e-k < 2 {
			return -1
		}
		digits += e - k
		groups++
		pairs = pairs && e-k == 2
		k = e
		c := byteAt(s, k)
		if isTrunkSep(c) && c != '/' && isDigit(byteAt(s, k+1)) && (sep == 0 || c == sep) {
			sep = c
			k++
			continue
		}
		break
	}
	if digits < 10 || digits > 11 || groups > 5 || !numberEndOK(s, k) || binaryDigits(s[i:k]) {
		return -1
	}
	if pairs && (hexPairBefore(s, i) || hexPairAfter(s, k)) { // a hex dump
		return -1
	}
	if sep == '.' && !pairs { // 01.23.45.67.89, but not 05.999999999
		return -1
	}
	return k
}

// binaryDigits reports whether every digit in s is 0 or 1: a bit string.
func binaryDigits(s string) bool {
	for k := 0; k < len(s); k++ {
		if s[k] > '1' && s[k] <= '9' {
			return false
		}
	}
	return true
}

// hexPairBefore reports whether the text before i ends with a word of two
// hex digits and a space ("6d 01 00 …"); hexPairAfter whether one follows k.
func hexPairBefore(s string, i int) bool {
	return byteAt(s, i-1) == ' ' && isHex(byteAt(s, i-2)) && isHex(byteAt(s, i-3)) && !isAlnum(byteAt(s, i-4))
}

func hexPairAfter(s string, k int) bool {
	return byteAt(s, k) == ' ' && isHex(byteAt(s, k+1)) && isHex(byteAt(s, k+2)) && !isAlnum(byteAt(s, k+3))
}
