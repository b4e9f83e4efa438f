package pii

import "github.com/mcpgate/mcpgate/internal/detect"

// tokenLead is how far before its first digit a number-led finding can
// start: the six letters of a codice fiscale, with room to spare.
const tokenLead = 8

// scanTokens walks text from i, word by word, and tries the number-led
// kinds at each word start: every kind but e-mail and IPv6 starts with a
// digit, an upper-case letter, '+' or '('. A word that starts with a
// lower-case letter is skipped whole, so prose costs one table lookup a
// byte.
func (d *Detector) scanTokens(text string, i int, dst []detect.Finding) []detect.Finding {
	if inWord(text, i) {
		i = wordEnd(text, i)
	}
	for i < len(text) {
		c := text[i]
		switch cls := byteClass[c]; {
		case cls == 0:
			if (c == '+' || c == '(') && !inWord(text, i) {
				if k, end := d.matchPunct(text, i); end > i {
					dst = append(dst, finding(k, i, end))
					i = end
					continue
				}
			}
			i++
			continue
		case isEscape(text, i):
			i++
			continue
		case cls == classLower: // no kind starts with one: skip the word
			i = wordEnd(text, i)
			continue
		}
		k, end, skip := d.matchWord(text, i)
		if end > i {
			dst = append(dst, finding(k, i, end))
			i = end
			continue
		}
		if skip > i {
			i = skip
			continue
		}
		i = wordEnd(text, i)
	}
	return dst
}

// wordEnd returns the end of the word at s[i].
func wordEnd(s string, i int) int {
	for i < len(s) && isAlnum(s[i]) {
		i++
	}
	return i
}

// matchPunct tries the kinds that start with '+' or '(' at i, and returns
// the kind and end of a match, or end -1.
func (d *Detector) matchPunct(text string, i int) (kindID, int) {
	if !d.enabled(kindPhone) {
		return 0, -1
	}
	if text[i] == '+' || byteAt(text, i+1) == '+' {
		return kindPhone, matchIntlPhone(text, i)
	}
	if end := matchNANP(text, i); end > 0 {
		return kindPhone, end
	}
	return kindPhone, matchTrunkPhone(text, i)
}

// matchWord tries the kinds that start with an alphanumeric at i, the
// start of a word, and returns the kind and end of a match, or end -1. The
// order settles the few texts two kinds could claim: the one with the
// stronger check goes first. Where a text has the shape of an IBAN or a
// card but fails its check, skip is its end: no other kind may take its
// digits (the tail of a mistyped IBAN is not a phone number).
func (d *Detector) matchWord(text string, i int) (k kindID, end, skip int) {
	c := text[i]
	if isUpper(c) {
		if d.enabled(kindIBAN) {
			if end, shape := matchIBAN(text, i); end > 0 {
				return kindIBAN, end, 0
			} else if shape > 0 {
				return 0, -1, shape
			}
		}
		if d.enabled(kindFiscalCode) {
			if end := matchFiscalCode(text, i); end > 0 {
				return kindFiscalCode, end, 0
			}
		}
		if d.enabled(kindDNI) && (c == 'X' || c == 'Y' || c == 'Z') {
			if end := matchNIE(text, i); end > 0 {
				return kindDNI, end, 0
			}
		}
		return 0, -1, 0
	}
	if !isDigit(c) || !hasDigitsAhead(text, i, minDigits) || !numberStartOK(text, i) {
		return 0, -1, 0
	}
	if d.enabled(kindCard) {
		if end, shape := matchCard(text, i); end > 0 {
			return kindCard, end, 0
		} else if shape > 0 {
			return 0, -1, shape
		}
	}
	for _, m := range numberMatchers {
		if d.enabled(m.kind) {
			if end := m.match(d, text, i); end > 0 {
				return m.kind, end, 0
			}
		}
	}
	return 0, -1, 0
}

// numberMatchers are tried in order at the start of a number, after
// cards.
var numberMatchers = []struct {
	kind  kindID
	match func(d *Detector, text string, i int) int
}{
	{kindCPF, func(_ *Detector, s string, i int) int { return matchCPF(s, i) }},
	{kindSSN, func(_ *Detector, s string, i int) int { return matchSSN(s, i) }},
	{kindAadhaar, func(_ *Detector, s string, i int) int { return matchAadhaar(s, i) }},
	{kindIPv4, (*Detector).matchIPv4},
	{kindPhone, func(_ *Detector, s string, i int) int { return matchNANP(s, i) }},
	{kindPhone, func(_ *Detector, s string, i int) int { return matchTrunkPhone(s, i) }},
	{kindDNI, func(_ *Detector, s string, i int) int { return matchDNI(s, i) }},
	{kindBSN, func(_ *Detector, s string, i int) int { return matchBSN(s, i) }},
}

// minDigits is the fewest digits any number-led kind has: an IPv4 address
// (1.1.1.1).
const minDigits = 4

// hasDigitsAhead reports whether n digits follow i, separated at most by
// single spaces, dashes, dots or slashes, and parentheses ("1 (800) …").
// Most numbers in tool output (counts, line numbers, clock times) are
// short and fail this at once.
func hasDigitsAhead(s string, i, n int) bool {
	for ; i < len(s); i++ {
		c := s[i]
		switch {
		case isDigit(c):
			if n--; n == 0 {
				return true
			}
		case c == '(' || c == ')':
		case (c == ' ' || c == '-' || c == '.' || c == '/') && (isDigit(byteAt(s, i+1)) || byteAt(s, i+1) == '('):
		default:
			return false
		}
	}
	return false
}

// continuesGroups reports whether the number at i, whose groups are
// separated by sep, follows another group of digits in the same spacing
// ("2024 0815 4711 00", "1234 4111 1111 1111 1111"): a number is not taken
// from the middle of a longer grouped one.
func continuesGroups(s string, i int, sep byte) bool {
	return sep != 0 && byteAt(s, i-1) == sep && isDigit(byteAt(s, i-2))
}
