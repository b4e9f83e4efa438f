package pii

// National identity numbers, chosen because each carries a check
// character, so that a random number of the same shape rarely passes:
//
//   - es_dni: Spanish DNI (8 digits and a letter) and NIE (X, Y or Z, 7
//     digits and a letter); the letter is the number modulo 23.
//   - it_fiscal_code: Italian codice fiscale (16 characters encoding name,
//     birth date and place), with its check letter; "omocodia" variants
//     (digits replaced by letters) included.
//   - br_cpf: Brazilian CPF, two mod-11 check digits; written
//     000.000.000-00 it stands alone, as 11 bare digits it needs "CPF"
//     before it.
//   - nl_bsn: Dutch citizen service number, 9 digits passing the
//     "11-proof"; one random 9-digit number in 11 passes, so it needs a
//     keyword ("BSN", "burgerservicenummer") before it.
//   - in_aadhaar: Indian Aadhaar, 12 digits, the first 2-9, with a
//     Verhoeff check digit; written in groups of four it stands alone, as
//     12 bare digits it needs "Aadhaar" before it.
//
// Format-only ids (UK NINO, US passport numbers) are not reported: without
// a check they cannot be told from the ids of everything else.

const dniLetters = "TRWAGMYFPDXBNJZSQVHLCKE"

// matchDNI returns the end of the DNI that starts at s[i] (a digit), or -1:
// 8 digits, an optional dash, the check letter.
func matchDNI(s string, i int) int {
	k := digitsEnd(s, i)
	if k-i != 8 || isDate(s[i:k]) {
		return -1
	}
	return dniLetterEnd(s, k, atoi(s[i:k]))
}

// matchNIE returns the end of the NIE that starts at s[i] (X, Y or Z), or
// -1: the letter (standing for 0, 1, 2), an optional dash, 7 digits, an
// optional dash, the check letter.
func matchNIE(s string, i int) int {
	j := i + 1
	if byteAt(s, j) == '-' {
		j++
	}
	k := digitsEnd(s, j)
	if k-j != 7 {
		return -1
	}
	return dniLetterEnd(s, k, int(s[i]-'X')*10_000_000+atoi(s[j:k]))
}

// dniLetterEnd returns the end of the check letter of number at s[k] (after
// an optional dash), or -1 if it is not there or not number's letter.
func dniLetterEnd(s string, k, number int) int {
	if byteAt(s, k) == '-' {
		k++
	}
	if byteAt(s, k) != dniLetters[number%23] || isAlnum(byteAt(s, k+1)) {
		return -1
	}
	return k + 1
}

// isDate reports whether eight digits read as a date, YYYYMMDD from 1900 to
// 2039: "20240115T103000Z" starts with one, and few DNI numbers (one in
// two thousand) do.
func isDate(d string) bool {
	year, month, day := atoi(d[:4]), atoi(d[4:6]), atoi(d[6:])
	return year >= 1900 && year < 2040 && month >= 1 && month <= 12 && day >= 1 && day <= 31
}

func atoi(digits string) int {
	v := 0
	for k := 0; k < len(digits); k++ {
		v = v*10 + int(digits[k]-'0')
	}
	return v
}

// Codice fiscale: positions of the digits (which omocodia may replace by
// one of omocodes), and the values of the characters in odd positions
// (1-based) for the check letter; even positions count 0-9 and A=0 … Z=25.
const omocodes = "LMNPQRSTUV"

var (
	fiscalDigits = [16]bool{6: true, 7: true, 9: true, 10: true, 12: true, 13: true, 14: true}
	fiscalOdd    = [26]int{1, 0, 5, 7, 9, 13, 15, 17, 19, 21, 2, 4, 18, 20, 11, 3, 6, 8, 12, 14, 16, 10, 22, 25, 24, 23}
)

// matchFiscalCode returns the end of the codice fiscale that starts at
// s[i], or -1.
func matchFiscalCode(s string, i int) int {
	end := i + 16
	if end > len(s) || isAlnum(byteAt(s, end)) {
		return -1
	}
	cf := s[i:end]
	sum := 0
	var day int
	for k := 0; k < 15; k++ {
		c := cf[k]
		v := -1 // the digit's value, where a digit belongs
		switch {
		case fiscalDigits[k] && isDigit(c):
			v = int(c - '0')
		case fiscalDigits[k] && isUpper(c):
			if o := indexByte(omocodes, c); o >= 0 {
				v = o
			}
		case !fiscalDigits[k] && isUpper(c):
		default:
			return -1
		}
		if fiscalDigits[k] && v < 0 {
			return -1
		}
		if k == 9 || k == 10 {
			day = day*10 + v
		}
		if k%2 == 0 { // odd in the 1-based numbering of the standard
			if isDigit(c) {
				sum += fiscalOdd[c-'0']
			} else {
				sum += fiscalOdd[c-'A']
			}
		} else if isDigit(c) {
			sum += int(c - '0')
		} else {
			sum += int(c - 'A')
		}
	}
	month := cf[8]
	if indexByte("ABCDEHLMPRST", month) < 0 || day == 0 || day > 71 || (day > 31 && day < 41) {
		return -1
	}
	if cf[15] != byte('A'+sum%26) {
		return -1
	}
	return end
}

func indexByte(s string, c byte) int {
	for k := 0; k < len(s); k++ {
		if s[k] == c {
			return k
		}
	}
	return -1
}

var cpfKeywords = []string{"cpf"}

// matchCPF returns the end of the CPF that starts at s[i], or -1.
func matchCPF(s string, i int) int {
	var d [11]byte
	var end int
	if k := digitsEnd(s, i); k-i == 11 {
		if !keywordBefore(s, i, keywordWindow, cpfKeywords) {
			return -1
		}
		copy(d[:], s[i:k])
		end = k
	} else { // 000.000.000-00
		j, n := i, 0
		for g, size := range [4]int{3, 3, 3, 2} {
			if g > 0 {
				want := byte('.')
				if g == 3 {
					want = '-'
				}
				if byteAt(s, j) != want {
					return -1
				}
				j++
			}
			if digitsEnd(s, j) != j+size {
				return -1
			}
			n += copy(d[n:], s[j:j+size])
			j += size
		}
		end = j
	}
	if !numberEndOK(s, end) || !validCPF(d) {
		return -1
	}
	return end
}

// validCPF checks both mod-11 check digits. Numbers of one repeated digit
// pass the check but are never issued.
func validCPF(d [11]byte) bool {
	same := true
	for _, c := range d[1:] {
		same = same && c == d[0]
	}
	if same {
		return false
	}
	check := func(n int) byte {
		sum := 0
		for k := range n {
			sum += int(d[k]-'0') * (n + 1 - k)
		}
		r := sum * 10 % 11
		if r == 10 {
			r = 0
		}
		return byte('0' + r)
	}
	return check(9) == d[9] && check(10) == d[10]
}

var bsnKeywords = []string{"bsn", "burgerservicenummer", "burgerservice", "sofinummer", "sofi-nummer", "sofi nummer", "citizen service number"}

// matchBSN returns the end of the BSN that starts at s[i], or -1: 9 digits,
// bare or written 0000.00.000, after a keyword.
func matchBSN(s string, i int) int {
	var d [9]byte
	var end int
	if k := digitsEnd(s, i); k-i == 9 {
		copy(d[:], s[i:k])
		end = k
	} else if k-i == 4 && byteAt(s, k) == '.' && digitsEnd(s, k+1) == k+3 && byteAt(s, k+3) == '.' && digitsEnd(s, k+4) == k+7 {
		copy(d[:4], s[i:k])
		copy(d[4:6], s[k+1:k+3])
		copy(d[6:], s[k+4:k+7])
		end = k + 7
	} else {
		return -1
	}
	if !numberEndOK(s, end) || !elevenProof(d) || !keywordBefore(s, i, keywordWindow, bsnKeywords) {
		return -1
	}
	return end
}

// elevenProof: 9·d1 + 8·d2 + … + 2·d8 − d9 is a non-zero multiple of 11.
func elevenProof(d [9]byte) bool {
	sum := 0
	for k := range 8 {
		sum += int(d[k]-'0') * (9 - k)
	}
	sum -= int(d[8] - '0')
	return sum != 0 && sum%11 == 0
}

var aadhaarKeywords = []string{"aadhaar", "aadhar", "uidai"}

// matchAadhaar returns the end of the Aadhaar number that starts at s[i],
// or -1: 0000 0000 0000 (or with dashes), or 12 bare digits after a
// keyword.
func matchAadhaar(s string, i int) int {
	var d [12]byte
	var end int
	if k := digitsEnd(s, i); k-i == 12 {
		if !keywordBefore(s, i, keywordWindow, aadhaarKeywords) {
			return -1
		}
		copy(d[:], s[i:k])
		end = k
	} else if k-i == 4 {
		sep := byteAt(s, k)
		if (sep != ' ' && sep != '-') || continuesGroups(s, i, sep) || digitsEnd(s, k+1) != k+5 || byteAt(s, k+5) != sep || digitsEnd(s, k+6) != k+10 {
			return -1
		}
		copy(d[:4], s[i:k])
		copy(d[4:8], s[k+1:k+5])
		copy(d[8:], s[k+6:k+10])
		end = k + 10
		if c := byteAt(s, end); c == sep && isDigit(byteAt(s, end+1)) {
			return -1 // a fourth group: something longer
		}
	} else {
		return -1
	}
	if d[0] < '2' || !numberEndOK(s, end) || !verhoeff(d[:]) {
		return -1
	}
	return end
}

// The Verhoeff scheme: multiplication in the dihedral group D5 and a
// position-dependent permutation; it catches every single-digit error and
// every transposition of adjacent digits.
var (
	verhoeffD = [10][10]uint8{
		{0, 1, 2, 3, 4, 5, 6, 7, 8, 9},
		{1, 2, 3, 4, 0, 6, 7, 8, 9, 5},
		{2, 3, 4, 0, 1, 7, 8, 9, 5, 6},
		{3, 4, 0, 1, 2, 8, 9, 5, 6, 7},
		{4, 0, 1, 2, 3, 9, 5, 6, 7, 8},
		{5, 9, 8, 7, 6, 0, 4, 3, 2, 1},
		{6, 5, 9, 8, 7, 1, 0, 4, 3, 2},
		{7, 6, 5, 9, 8, 2, 1, 0, 4, 3},
		{8, 7, 6, 5, 9, 3, 2, 1, 0, 4},
		{9, 8, 7, 6, 5, 4, 3, 2, 1, 0},
	}
	verhoeffP = [8][10]uint8{
		{0, 1, 2, 3, 4, 5, 6, 7, 8, 9},
		{1, 5, 7, 6, 2, 8, 3, 0, 9, 4},
		{5, 8, 0, 3, 7, 9, 6, 1, 4, 2},
		{8, 9, 1, 6, 0, 4, 3, 5, 2, 7},
		{9, 4, 5, 3, 1, 2, 6, 8, 7, 0},
		{4, 2, 8, 6, 5, 7, 3, 9, 0, 1},
		{2, 7, 9, 3, 8, 0, 6, 4, 1, 5},
		{7, 0, 4, 6, 9, 1, 3, 2, 5, 8},
	}
)

// verhoeff reports whether digits (ASCII), check digit last, pass.
func verhoeff(digits []byte) bool {
	c := uint8(0)
	for k := range digits {
		c = verhoeffD[c][verhoeffP[k%8][digits[len(digits)-1-k]-'0']]
	}
	return c == 0
}
