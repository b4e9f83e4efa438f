package pii

import (
	"strings"

	"github.com/mcpgate/mcpgate/internal/detect"
)

// E-mail addresses: a dot-atom local part (the characters people use:
// letters, digits and . _ % + - ') and a domain of at least two labels whose
// last is alphabetic. Quoted local parts and non-ASCII addresses are not
// looked for. What has the shape but is not an address is left alone:
// module versions (tools@v0.26.0, react@18.2.0: the last label is not
// alphabetic), image names (icon@2x.png: a file extension), URL userinfo
// (https://user:pw@host/) and scp-style SSH targets (git@github.com:org/repo).

const (
	maxLocal  = 64
	maxDomain = 253
)

func isLocalChar(c byte) bool {
	return isAlnum(c) || c == '.' || c == '_' || c == '%' || c == '+' || c == '-' || c == '\''
}

// scanEmails appends the e-mail addresses in text, found from each '@'.
func (d *Detector) scanEmails(text string, dst []detect.Finding) []detect.Finding {
	floor := 0 // no address starts before the end of the previous one
	for off := 0; off < len(text); {
		at := strings.IndexByte(text[off:], '@')
		if at < 0 {
			break
		}
		at += off
		off = at + 1
		if start, end := emailAround(text, at, floor); end > 0 {
			dst = append(dst, finding(kindEmail, start, end))
			floor, off = end, end
		}
	}
	return dst
}

// emailAround returns the e-mail address around the '@' at text[at], or
// end -1.
func emailAround(text string, at, floor int) (start, end int) {
	start = at
	for start > floor && isLocalChar(text[start-1]) && !isEscape(text, start-1) {
		start--
	}
	if at-start > maxLocal {
		return 0, -1
	}
	// A diff's "+", an option's "--", a quote: punctuation, not the address.
	for start < at && (text[start] == '.' || text[start] == '+' || text[start] == '-' || text[start] == '\'') {
		start++
	}
	local := text[start:at]
	if local == "" || local[len(local)-1] == '.' || strings.Contains(local, "..") || isUserinfo(text, start) || byteAt(text, start-1) == '@' {
		return 0, -1
	}
	end = domainEnd(text, at+1)
	if end < 0 {
		return 0, -1
	}
	if byteAt(text, end) == ':' && isScpPath(byteAt(text, end+1)) {
		return 0, -1
	}
	return start, end
}

// isUserinfo reports whether the local part at text[start] is a URL's
// userinfo: "//user@" or "//user:password@".
func isUserinfo(text string, start int) bool {
	j := start
	if byteAt(text, j-1) == ':' {
		j--
		for j > 0 && !isSpace(text[j-1]) && text[j-1] != '/' && j > start-maxLocal {
			j--
		}
	}
	return byteAt(text, j-1) == '/' && byteAt(text, j-2) == '/'
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// isScpPath reports whether c, after "user@host:", starts a path or a
// repository name (scp syntax), not the prose after a colon.
func isScpPath(c byte) bool { return isAlnum(c) || c == '/' || c == '~' || c == '.' || c == '_' }

// domainEnd returns the end of the domain that starts at i, or -1: labels
// of letters, digits and inner hyphens, at least two of them, the last
// alphabetic (or an IDNA "xn--" label) and not a file extension.
func domainEnd(s string, i int) int {
	end, labels, lastLabel := i, 0, i
	for j := i; ; j++ { // j: start of a label
		k := j
		for k < len(s) && (isAlnum(s[k]) || s[k] == '-') {
			k++
		}
		if k == j || k-j > 63 || s[j] == '-' || s[k-1] == '-' {
			break
		}
		labels++
		lastLabel, end = j, k
		if byteAt(s, k) != '.' || !isAlnum(byteAt(s, k+1)) {
			break
		}
		j = k
	}
	if labels < 2 || end-i > maxDomain {
		return -1
	}
	tld := s[lastLabel:end]
	if !alphaTLD(tld) || isFileExtension(tld) {
		return -1
	}
	if c := byteAt(s, end); c == '-' || c == '_' || c == '@' {
		return -1
	}
	return end
}

func alphaTLD(tld string) bool {
	if len(tld) < 2 {
		return false
	}
	if len(tld) > 4 && equalFoldASCII(tld[:4], "xn--") {
		return true
	}
	// All lower or all upper case: "m.Version" is a field in code.
	var seen uint8
	for k := 0; k < len(tld); k++ {
		c := byteClass[tld[k]]
		if c&(classUpper|classLower) == 0 {
			return false
		}
		seen |= c
	}
	return seen != classUpper|classLower
}

// fileExtensions end names that look like domains in asset and module
// references (icon@2x.png, bundle@3.1.min.js); none is a top-level domain
// (which is why .md, .py, .rs and .so, country domains, are not here).
var fileExtensions = []string{
	"png", "jpg", "jpeg", "gif", "svg", "webp", "ico", "bmp", "tif", "tiff",
	"css", "js", "mjs", "cjs", "ts", "tsx", "jsx", "map", "json", "lock",
	"yaml", "yml", "toml", "txt", "html", "htm", "xml", "wasm", "woff",
	"woff2", "ttf", "otf", "gz", "tgz", "exe", "dll", "dylib", "go", "rb",
	"java", "class", "jar", "log", "csv", "pdf",
}

func isFileExtension(tld string) bool {
	for _, ext := range fileExtensions {
		if len(tld) == len(ext) && equalFoldASCII(tld, ext) {
			return true
		}
	}
	return false
}
