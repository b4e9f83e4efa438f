package pii

// Byte classes. Only ASCII counts as a word character: a byte of a UTF-8
// sequence is a boundary, so that a number written right after a word in a
// script without spaces (Chinese, Japanese) is still found.
const (
	classDigit = 1 << iota
	classUpper
	classLower
)

var byteClass = func() (t [256]uint8) {
	for c := '0'; c <= '9'; c++ {
		t[c] = classDigit
	}
	for c := 'A'; c <= 'Z'; c++ {
		t[c] = classUpper
		t[c+'a'-'A'] = classLower
	}
	return t
}()

func isDigit(c byte) bool { return c-'0' < 10 }
func isUpper(c byte) bool { return c-'A' < 26 }
func isAlnum(c byte) bool { return byteClass[c] != 0 }
func isHex(c byte) bool   { return isDigit(c) || (c|0x20)-'a' < 6 }

// indexDigit returns the index of the first ASCII digit in s, or -1.
func indexDigit(s string) int {
	for i := 0; i < len(s); i++ {
		if isDigit(s[i]) {
			return i
		}
	}
	return -1
}

// digitsEnd returns the end of the run of digits that starts at i.
func digitsEnd(s string, i int) int {
	for i < len(s) && isDigit(s[i]) {
		i++
	}
	return i
}

// byteAt returns s[i], or 0 outside s: boundary checks read past either end
// without a bounds test at every call site.
func byteAt(s string, i int) byte {
	if i < 0 || i >= len(s) {
		return 0
	}
	return s[i]
}

// isEscape reports whether s[j] is the letter of a backslash escape (\n,
// \t, \r). Text that was JSON-encoded twice keeps them literally
// ("id,ip\n17,8.8.8.8"), and there they separate words like the
// whitespace they stand for.
func isEscape(s string, j int) bool {
	c := byteAt(s, j)
	return (c == 'n' || c == 't' || c == 'r') && byteAt(s, j-1) == '\\'
}

// inWord reports whether s[i] continues a word: s[i-1] is a word
// character.
func inWord(s string, i int) bool { return isAlnum(byteAt(s, i-1)) && !isEscape(s, i-1) }

// numberStartOK reports whether a number may start at i: it is not the
// tail of a decimal (3.14), an identifier (id_4111…) or a longer dashed
// number (978-0-306…).
func numberStartOK(s string, i int) bool {
	switch c := byteAt(s, i-1); c {
	case '_':
		return false
	case '.', '-':
		return !isAlnum(byteAt(s, i-2))
	case ':': // a clock (15:04:05), a ratio, a port
		return !isDigit(byteAt(s, i-2))
	default:
		return !inWord(s, i)
	}
}

// numberEndOK reports whether a number may end at i: what follows is not a
// word character, nor a separator that continues it (123-45-6789-0,
// 123-45-6789-X, 8.8.8.8.1).
func numberEndOK(s string, i int) bool {
	switch c := byteAt(s, i); c {
	case '_':
		return false
	case '.':
		return !isDigit(byteAt(s, i+1))
	case '-':
		return !isAlnum(byteAt(s, i+1))
	default:
		return !isAlnum(c)
	}
}

// keywordBefore reports whether one of keywords (lower case ASCII) occurs,
// as the start of a word, in the window bytes before i. Some numbers are
// only personal data when the text says what they are: nine bare digits are
// an SSN after "SSN:", and an order number anywhere else.
func keywordBefore(s string, i, window int, keywords []string) bool {
	lo := max(0, i-window)
	w := s[lo:i]
	for _, kw := range keywords {
		for j := 0; j+len(kw) <= len(w); j++ {
			if isAlnum(byteAt(s, lo+j-1)) && isAlnum(kw[0]) {
				continue
			}
			if equalFoldASCII(w[j:j+len(kw)], kw) {
				return true
			}
		}
	}
	return false
}

// equalFoldASCII reports whether s equals lower (all lower case) ignoring
// ASCII case.
func equalFoldASCII(s, lower string) bool {
	for k := 0; k < len(s); k++ {
		c := s[k]
		if isUpper(c) {
			c += 'a' - 'A'
		}
		if c != lower[k] {
			return false
		}
	}
	return true
}

// wordBefore returns the word that ends just before i, skipping spaces and
// the punctuation that joins a label to its value ("version: 1.2.3.4").
func wordBefore(s string, i int) string {
	j := i
	for j > 0 && (s[j-1] == ' ' || s[j-1] == ':' || s[j-1] == '=' || s[j-1] == '\t') && i-j < 4 {
		j--
	}
	k := j
	for k > 0 && (isAlnum(s[k-1]) || s[k-1] == '.') {
		k--
	}
	return s[k:j]
}
