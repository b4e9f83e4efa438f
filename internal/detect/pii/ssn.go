package pii

// US Social Security numbers, by the SSA's rules: area (first three
// digits) not 000, 666 or 900-999; group (next two) not 00; serial (last
// four) not 0000. Written AAA-GG-SSSS the shape is distinctive enough on
// its own; written with spaces or as nine bare digits it is an order
// number or an id as often as not, so it is reported only after a keyword
// ("SSN", "social security") in the keywordWindow bytes before it.

const keywordWindow = 40

var ssnKeywords = []string{"ssn", "social security", "soc sec", "ss#", "ss no", "ss-no"}

// Numbers the SSA voids because they were printed in advertisements and
// then used by thousands of people.
var voidSSNs = [...]string{"078051120", "219099999"}

// matchSSN returns the end of the SSN that starts at i, or -1.
func matchSSN(s string, i int) int {
	var ssn [9]byte
	var end int
	switch a := digitsEnd(s, i); a - i {
	case 3:
		sep := byteAt(s, a)
		if sep != '-' && sep != ' ' {
			return -1
		}
		g := a + 1
		if digitsEnd(s, g) != g+2 || byteAt(s, g+2) != sep {
			return -1
		}
		serial := g + 3
		end = digitsEnd(s, serial)
		if end != serial+4 {
			return -1
		}
		if sep == ' ' && !keywordBefore(s, i, keywordWindow, ssnKeywords) {
			return -1
		}
		copy(ssn[:3], s[i:a])
		copy(ssn[3:5], s[g:g+2])
		copy(ssn[5:], s[serial:end])
	case 9:
		end = a
		if !keywordBefore(s, i, keywordWindow, ssnKeywords) {
			return -1
		}
		copy(ssn[:], s[i:a])
	default:
		return -1
	}
	if !numberEndOK(s, end) || !validSSN(ssn) {
		return -1
	}
	return end
}

func validSSN(d [9]byte) bool {
	area, group, serial := string(d[:3]), string(d[3:5]), string(d[5:])
	if area == "000" || area == "666" || area[0] == '9' || group == "00" || serial == "0000" {
		return false
	}
	for _, v := range voidSSNs {
		if string(d[:]) == v {
			return false
		}
	}
	return true
}
