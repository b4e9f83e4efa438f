package pii

// Payment cards: 13 to 19 digits, written whole or in the groups card
// issuers print (4-4-4-4, 4-6-5 for Amex, 4-6-4 for Diners, 4-4-4-4-3),
// Luhn-valid and in a known issuer range. Random digits pass Luhn one time
// in ten; the issuer ranges and lengths, the grouping and the refusal to
// take a card out of a longer number keep order ids and timestamps out.

// matchCard returns the end of the card number that starts at i, or -1
// and, if the text there is written like a card but fails the checks, the
// end of that shape.
func matchCard(s string, i int) (end, shape int) {
	if byteAt(s, i-1) == '-' { // a sign: -4576982950128230565 is an int64
		return -1, 0
	}
	var groups [8]int // lengths
	var digits [19]byte
	n, total := 0, 0
	var sep byte
	j := i
	for {
		k := digitsEnd(s, j)
		if n == len(groups) || total+k-j > len(digits) {
			total = len(digits) + 1 // too long to be a card
			j = k
			break
		}
		for p := j; p < k; p++ {
			digits[total] = s[p] - '0'
			total++
		}
		groups[n] = k - j
		n++
		j = k
		c := byteAt(s, j)
		if (c == ' ' || c == '-') && (sep == 0 || c == sep) && isDigit(byteAt(s, j+1)) {
			sep = c
			j++
			continue
		}
		break
	}
	if continuesGroups(s, i, sep) {
		return -1, 0
	}
	layout := total > len(digits) || cardLayout(groups[:n])
	if total <= len(digits) && layout && numberEndOK(s, j) && validCard(digits[:total]) {
		if n == 1 && inNumberList(s, i, j) {
			return -1, j
		}
		return j, 0
	}
	// "4111 1111 1111 1111 123": a card followed by its CVV or an expiry in
	// the same spacing. The whole is tried first: when both read as cards,
	// the longer covers the shorter. Only spaces: dashes bind a number
	// together.
	if sep == ' ' {
		for _, layout := range [][]int{{4, 4, 4, 4}, {4, 6, 5}, {4, 6, 4}} {
			if n <= len(layout) || !hasPrefix(groups[:n], layout) {
				continue
			}
			size, end := 0, i-1
			for _, g := range layout {
				size += g
				end += g + 1
			}
			if validCard(digits[:size]) {
				return end, 0
			}
		}
	}
	if layout && total >= 13 {
		return -1, j
	}
	return -1, 0
}

// inNumberList reports whether the whole number s[i:j] stands next to
// another long number (ten digits or more) that is not a card, with only a
// comma, a semicolon, a bar or white space between: a column of int64
// constants, hashes or ids, where one in ten passes Luhn. A list of card
// numbers is still found: there the neighbours are cards too.
func inNumberList(s string, i, j int) bool {
	isList := func(c byte) bool { return c == ',' || c == ';' || c == '|' || isSpace(c) }
	// The number after.
	k := j
	for k < len(s) && k-j < 3 && isList(s[k]) {
		k++
	}
	if k > j && byteAt(s, k) == '-' {
		k++
	}
	if longNonCard(s, k, digitsEnd(s, k)) {
		return true
	}
	// The number before, integer or decimal (2251799813685250.5): its
	// integer part.
	e := i
	for e > 0 && i-e < 3 && isList(s[e-1]) {
		e--
	}
	if e == i {
		return false
	}
	b := e
	for b > 0 && (isDigit(s[b-1]) || s[b-1] == '.') {
		b--
	}
	return longNonCard(s, b, digitsEnd(s, b))
}

// longNonCard reports whether s[i:j] is a run of ten or more digits that is
// not a card number.
func longNonCard(s string, i, j int) bool {
	if j-i < 10 {
		return false
	}
	if j-i > 19 {
		return true
	}
	var digits [19]byte
	for k := i; k < j; k++ {
		digits[k-i] = s[k] - '0'
	}
	return !validCard(digits[:j-i])
}

func hasPrefix(groups, layout []int) bool {
	for k, g := range layout {
		if groups[k] != g {
			return false
		}
	}
	return true
}

// cardLayout reports whether groups (digit counts) is how a card is
// written: whole, in fours with a shorter last group, or 4-6-5 / 4-6-4.
func cardLayout(groups []int) bool {
	switch len(groups) {
	case 1:
		return true
	case 3:
		if groups[0] == 4 && groups[1] == 6 && (groups[2] == 5 || groups[2] == 4) {
			return true
		}
	}
	for k, g := range groups {
		if g != 4 && (k != len(groups)-1 || g > 4) {
			return false
		}
	}
	return len(groups) >= 4
}

// validCard reports whether digits (values 0-9) are a Luhn-valid number of
// a length some issuer uses for its range.
func validCard(digits []byte) bool {
	n := len(digits)
	if n < 13 || n > 19 || !luhn(digits) {
		return false
	}
	prefix := func(k int) int {
		v := 0
		for _, d := range digits[:k] {
			v = v*10 + int(d)
		}
		return v
	}
	for _, r := range issuerRanges {
		if p := prefix(r.digits); p >= r.lo && p <= r.hi && r.lengths&(1<<n) != 0 {
			return true
		}
	}
	return false
}

func luhn(digits []byte) bool {
	sum := 0
	double := false
	for k := len(digits) - 1; k >= 0; k-- {
		d := int(digits[k])
		if double {
			d *= 2
			if d > 9 {
				d -= 9
			}
		}
		sum += d
		double = !double
	}
	return sum%10 == 0
}

// lengths returns the bit set of the card lengths lo..hi.
func lengths(lo, hi int) uint32 {
	var set uint32
	for n := lo; n <= hi; n++ {
		set |= 1 << n
	}
	return set
}

// issuerRanges are the issuer identification number ranges of the major
// networks, with the lengths each issues.
var issuerRanges = []struct {
	digits  int // length of the prefix compared
	lo, hi  int
	lengths uint32 // bit n set: n-digit numbers are issued
}{
	{1, 4, 4, 1<<13 | 1<<16 | 1<<19}, // Visa
	{2, 51, 55, 1 << 16},             // Mastercard
	{4, 2221, 2720, 1 << 16},         // Mastercard 2-series
	{2, 34, 34, 1 << 15},             // American Express
	{2, 37, 37, 1 << 15},             // American Express
	{4, 6011, 6011, lengths(16, 19)}, // Discover
	{3, 644, 649, lengths(16, 19)},   // Discover
	{2, 65, 65, lengths(16, 19)},     // Discover
	{4, 3528, 3589, lengths(16, 19)}, // JCB
	{3, 300, 305, lengths(14, 19)},   // Diners Club
	{4, 3095, 3095, lengths(14, 19)}, // Diners Club
	{2, 36, 36, lengths(14, 19)},     // Diners Club
	{2, 38, 39, lengths(14, 19)},     // Diners Club
	{2, 62, 62, lengths(16, 19)},     // UnionPay (and Discover's 622126-622925)
	{4, 8100, 8171, lengths(16, 19)}, // UnionPay
	{2, 50, 50, lengths(13, 19)},     // Maestro
	{2, 56, 58, lengths(13, 19)},     // Maestro
	{3, 639, 639, lengths(13, 19)},   // Maestro
	{4, 6304, 6304, lengths(13, 19)}, // Maestro
	{2, 67, 67, lengths(13, 19)},     // Maestro (6759, 6761-6763 …)
	{4, 2200, 2204, lengths(16, 19)}, // Mir
}
