package secrets

import "strings"

const (
	pemBegin = "-----BEGIN "
	pemEnd   = "-----END "
	pemDash  = "-----"
	// pemLabelMax bounds the search for the dashes that end the label.
	pemLabelMax = 48
	// pemMaxBlock bounds the search for the footer: the largest RSA and PGP
	// private keys in use are well under it.
	pemMaxBlock = 64 << 10
	// pemMinBody is how many base64 characters make a key rather than a
	// documentation stub such as "MIIEow...".
	pemMinBody = 64
)

// matchPEM finds a private key block: -----BEGIN <label>PRIVATE KEY-----
// (RSA, EC, DSA, OPENSSH, ENCRYPTED, PGP … BLOCK), its base64 body and its
// footer. Bodies may break lines with real newlines or with the two
// characters \n (a key pasted into an .env value or a JSON string encoded
// twice). A block cut short (head -20 id_rsa) is still a key: without a
// footer the finding runs to the last line of base64.
func matchPEM(st *scanState, text string, at int) (int, int, bool) {
	if !strings.HasPrefix(text[at:], pemBegin) {
		return 0, 0, false
	}
	labelStart := at + len(pemBegin)
	n := strings.Index(text[labelStart:min(len(text), labelStart+pemLabelMax)], pemDash)
	if n < 0 {
		return 0, 0, false
	}
	label := text[labelStart : labelStart+n]
	if !isPrivateKeyLabel(label) {
		return 0, 0, false
	}
	bodyStart := labelStart + n + len(pemDash)
	limit := min(len(text), bodyStart+pemMaxBlock)
	if i := st.nextPEMFooter(text, bodyStart, limit); i >= 0 {
		footer := i + len(pemEnd)
		if strings.HasPrefix(text[footer:], label) && strings.HasPrefix(text[footer+len(label):], pemDash) {
			if body, ok := pemBodyChars(text[bodyStart:i]); ok && body >= pemMinBody {
				return at, footer + len(label) + len(pemDash), true
			}
			return 0, 0, false
		}
	}
	end, body := pemTruncatedBody(text[bodyStart:limit])
	if body < pemMinBody {
		return 0, 0, false
	}
	return at, bodyStart + end, true
}

func isPrivateKeyLabel(label string) bool {
	for i := 0; i < len(label); i++ {
		if c := label[i]; !('A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == ' ') {
			return false
		}
	}
	return strings.HasSuffix(label, "PRIVATE KEY") || strings.HasSuffix(label, "PRIVATE KEY BLOCK")
}

func isBase64Byte(c byte) bool {
	return isAlnum(c) || c == '+' || c == '/' || c == '='
}

// pemBodyChars counts the base64 characters of a body between header and
// footer, and rejects bodies holding what no key block holds (quotes,
// braces, semicolons: code that merely mentions both markers).
func pemBodyChars(body string) (int, bool) {
	n := 0
	for i := 0; i < len(body); i++ {
		c := body[i]
		switch {
		case isBase64Byte(c):
			n++
		case c == '\n', c == '\r', c == ' ', c == '\t', c == '\\', c == ':', c == ',', c == '-', c == '.', c == '(', c == ')', c == '@', c == '_':
			// line breaks, escaped line breaks, PEM and PGP armor headers
			// (Proc-Type: 4,ENCRYPTED; DEK-Info: AES-128-CBC,…; Comment: …)
		default:
			return n, false
		}
	}
	return n, true
}

// pemTruncatedBody reads the lines of a body with no footer in reach: armor
// headers ("Key: value"), then lines of base64 only. It returns where the
// last base64 line ends and how many base64 characters it read.
func pemTruncatedBody(s string) (end, count int) {
	pos := 0
	seenKeyLine := false
	width, lastWidth := 0, 0 // of the first and of the latest key line
	for pos < len(s) {
		lineEnd, next := nextPEMLine(s, pos)
		line := strings.TrimRight(s[pos:lineEnd], "\r \t")
		switch {
		case line == "":
			if seenKeyLine {
				return end, count
			}
		case !seenKeyLine && strings.Contains(line, ": "):
			// armor header
		default:
			n := base64Prefix(line)
			if n == 0 || seenKeyLine && lastWidth < width {
				return end, count // a short line was the last one
			}
			if !seenKeyLine {
				width = n
			}
			lastWidth = n
			seenKeyLine = true
			count += n
			end = pos + n
			if n < len(line) {
				return end, count // the key ends inside this line: "…AbC=" closing a quote
			}
		}
		pos = next
	}
	return end, count
}

// nextPEMLine finds the end of the line at pos, taking the two characters
// \n, \r or \r\n as a line break too.
func nextPEMLine(s string, pos int) (lineEnd, next int) {
	for i := pos; i < len(s); i++ {
		switch {
		case s[i] == '\n':
			return i, i + 1
		case strings.HasPrefix(s[i:], `\r\n`):
			return i, i + 4
		case strings.HasPrefix(s[i:], `\n`), strings.HasPrefix(s[i:], `\r`):
			return i, i + 2
		}
	}
	return len(s), len(s)
}

// base64Prefix is the length of the run of base64 characters line starts with.
func base64Prefix(line string) int {
	for i := 0; i < len(line); i++ {
		if !isBase64Byte(line[i]) {
			return i
		}
	}
	return len(line)
}

const (
	puttyHeader = "PuTTY-User-Key-File-"
	puttyMAC    = "Private-MAC: "
	puttyLines  = "\nPrivate-Lines: "
	// puttyMaxFile bounds the search for the MAC line that ends the file.
	puttyMaxFile = 16 << 10
)

// matchPuTTY finds a PuTTY private key file (.ppk, versions 2 and 3): from
// its first line to its Private-MAC line, with Private-Lines between.
func matchPuTTY(st *scanState, text string, at int) (int, int, bool) {
	mac := puttyMACValue(st, text, at)
	if mac < 0 {
		return 0, 0, false
	}
	end := hexRunEnd(text, mac)
	if end-mac < 40 {
		return 0, 0, false
	}
	return at, end, true
}

// puttyMACValue returns where the MAC's hex digits begin in the PuTTY file
// whose header is at text[at:], or -1 if it is no such file. Its searches
// are remembered (searchMemo): a flood of headers reads each byte once.
func puttyMACValue(st *scanState, text string, at int) int {
	rest := text[at+len(puttyHeader):]
	if len(rest) < 3 || (rest[0] != '2' && rest[0] != '3') || rest[1] != ':' || rest[2] != ' ' {
		return -1
	}
	limit := min(len(text), at+puttyMaxFile)
	mac := st.puttyMAC.index(text, puttyMAC, at, limit)
	if mac < 0 || st.puttyLines.index(text, puttyLines, at, mac) < 0 {
		return -1
	}
	return mac + len(puttyMAC)
}

// hexRunEnd is where the run of lower-case hex digits at text[i:] ends.
func hexRunEnd(text string, i int) int {
	for i < len(text) && ('0' <= text[i] && text[i] <= '9' || 'a' <= text[i] && text[i] <= 'f') {
		i++
	}
	return i
}

// puttyOpen reports whether the PuTTY file whose header is at text[at:]
// ends in a MAC whose digits reach the end of text: text's next bytes may
// lengthen it (the only match with no bound, see Detector.Stream). When
// openTo is not 0, the digits were found to reach text[:openTo]'s end:
// only the bytes after it are read, so that a MAC of megabytes that
// arrives in pieces is read once.
func puttyOpen(st *scanState, text string, at, openTo int) bool {
	if openTo > 0 {
		return hexRunEnd(text, openTo) == len(text)
	}
	mac := puttyMACValue(st, text, at)
	return mac >= 0 && hexRunEnd(text, mac) == len(text)
}

// nextPEMFooter returns where the first "-----END " in text[from:limit]
// starts, or -1. It remembers the last search, so that a text of many
// headers and no footer is searched once, not once per header: one that
// found none reads on from where it stopped (a MiB of headers, each
// searching the 64 KiB after it, cost three seconds).
func (st *scanState) nextPEMFooter(text string, from, limit int) int {
	if st.footerFrom <= from && (st.footerAt >= from || st.footerAt < 0 && st.footerLimit >= limit) {
		if st.footerAt >= limit {
			return -1
		}
		return st.footerAt
	}
	start := from
	if st.footerLimit > 0 && st.footerAt < 0 && st.footerFrom <= from && from <= st.footerLimit {
		// None lies whole in text[st.footerFrom:st.footerLimit].
		start = max(from, st.footerLimit-len(pemEnd)+1)
	}
	st.footerFrom, st.footerLimit, st.footerAt = from, limit, -1
	if i := strings.Index(text[start:limit], pemEnd); i >= 0 {
		st.footerAt = start + i
	}
	return st.footerAt
}
