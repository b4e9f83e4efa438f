package secrets

import (
	"encoding/base64"
	"hash/crc32"
	"strings"
)

const base62Digits = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

// githubChecksum checks the checksum GitHub (and npm, which adopted the
// format) put in their tokens: prefix_ + 30 random base62 characters + the
// CRC32 (IEEE) of those 30 characters written as 6 base62 digits, most
// significant first ("Behind GitHub's new authentication token formats",
// github.blog, 2021-04-05). GitHub's own documentation examples fail it.
// Fine-grained tokens (github_pat_) carry no public checksum and are not
// checked.
func githubChecksum(token string) bool {
	body := token[strings.IndexByte(token, '_')+1:]
	if len(body) != 36 {
		return false
	}
	sum := crc32.ChecksumIEEE([]byte(body[:30]))
	return body[30:] == base62Checksum(sum)
}

// base62Checksum writes v as 6 base62 digits, zero-padded.
func base62Checksum(v uint32) string {
	var digits [6]byte
	for i := len(digits) - 1; i >= 0; i-- {
		digits[i] = base62Digits[v%62]
		v /= 62
	}
	return string(digits[:])
}

// placeholderWords mark documentation examples and templates: a random
// body contains one by chance with odds below 1 in 5,000 even at 160
// characters.
var placeholderWords = []string{"xxxx", "****", "....", "example", "sample", "placeholder", "dummy", "redacted", "changeme", "insert"}

// looksLikePlaceholder reports whether a token body is not random: it holds
// a placeholder word, a run of six identical or consecutive characters
// (xxxxxx, abcdef; eight for digits: 00000000, 12345678), or (when 16 characters or longer) fewer than
// six distinct characters. Random bodies trip none of these except with
// negligible odds; the recall test measures it.
func looksLikePlaceholder(body string) bool {
	for _, w := range placeholderWords {
		if containsFold(body, w) {
			return true
		}
	}
	if yourAt := indexFold(body, "your"); yourAt == 0 || yourAt > 0 && !isAlnum(body[yourAt-1]) {
		return true // your-key-here, YOUR_TOKEN; four letters inside a long random body are chance
	}
	same, up := 1, 1
	var seen [256]bool
	distinct := 0
	for i := 0; i < len(body); i++ {
		c := body[i]
		if !seen[c] {
			seen[c] = true
			distinct++
		}
		if i == 0 {
			continue
		}
		if c == body[i-1] {
			same++
		} else {
			same = 1
		}
		if c == body[i-1]+1 {
			up++
		} else {
			up = 1
		}
		if limit := runLimit(c); same >= limit || up >= limit {
			return true
		}
	}
	return len(body) >= 16 && distinct < 6
}

// runLimit is the run of identical or consecutive characters ending in c
// that marks a placeholder: 6, or 8 for digits, which random numeric
// parts (a Telegram bot ID) repeat more often.
func runLimit(c byte) int {
	if '0' <= c && c <= '9' {
		return 8
	}
	return 6
}

// containsFold reports whether s contains word (lower case ASCII) in any case.
func containsFold(s, word string) bool { return indexFold(s, word) >= 0 }

// indexFold is where s first contains word (lower case ASCII) in any case, or -1.
func indexFold(s, word string) int {
	for i := 0; i+len(word) <= len(s); i++ {
		j := 0
		for ; j < len(word); j++ {
			if lowerASCII(s[i+j]) != word[j] {
				break
			}
		}
		if j == len(word) {
			return i
		}
	}
	return -1
}

func upperASCII(c byte) byte {
	if 'a' <= c && c <= 'z' {
		return c - ('a' - 'A')
	}
	return c
}

func lowerASCII(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// mixedClasses requires two of upper case, lower case and digits, which a
// random key has and a word, a number or an identifier in capitals lacks.
func mixedClasses(s string) bool {
	var upper, lower, digit int
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case 'A' <= c && c <= 'Z':
			upper = 1
		case 'a' <= c && c <= 'z':
			lower = 1
		case '0' <= c && c <= '9':
			digit = 1
		}
	}
	return upper+lower+digit >= 2
}

// azureSignature requires an Azure SAS sig= value to be what Azure signs
// with: an HMAC-SHA256, 32 bytes in URL-escaped standard base64.
func azureSignature(sig string) bool {
	r := strings.NewReplacer("%2B", "+", "%2b", "+", "%2F", "/", "%2f", "/", "%3D", "=", "%3d", "=")
	raw, err := base64.StdEncoding.DecodeString(r.Replace(sig))
	return err == nil && len(raw) == 32
}

// urlPasswordIsReal judges the password of scheme://user:password@host.
func urlPasswordIsReal(u string) bool {
	rest := u[strings.Index(u, "://")+3:]
	userinfo := rest[:strings.LastIndexByte(rest, '@')]
	colon := strings.IndexByte(userinfo, ':')
	user, password := userinfo[:colon], userinfo[colon+1:]
	return password != user && passwordIsReal(password)
}

// notPasswords are the placeholder words and well-known defaults that
// documentation and local development setups put where a password goes;
// reporting them would drown the real ones.
var notPasswords = map[string]bool{
	"password": true, "passwd": true, "pass": true, "pwd": true, "pw": true, "secret": true,
	"changeme": true, "example": true, "test": true, "admin": true, "root": true, "user": true,
	"guest": true, "default": true, "postgres": true, "mysql": true, "redis": true, "mongo": true,
	"p@ssw0rd": true, "password123": true, "mypassword": true, "yourpassword": true, "pass123": true,
}

// passwordIsReal rejects empty passwords, references and templates
// ($VAR, ${VAR}, %s, {{ var }}, <password>), masks (****, xxx) and the
// words in notPasswords.
func passwordIsReal(p string) bool {
	if p == "" || strings.ContainsAny(p[:1], "$%{<[*") || strings.Contains(p, "{{") || strings.Contains(p, "${") {
		return false
	}
	if strings.Trim(p, p[:1]) == "" {
		return false // one character repeated: ***, xxxxx
	}
	return !notPasswords[strings.ToLower(p)] && !looksLikePlaceholder(p)
}

// authValueIsReal judges the credential of an Authorization header: a
// random-looking token, and, when it is Basic credentials (base64 of
// user:password), a password that passwordIsReal accepts.
func authValueIsReal(v string) bool {
	if !mixedClasses(v) {
		return false
	}
	raw, err := base64.StdEncoding.DecodeString(v)
	if err != nil {
		return true
	}
	user, password, ok := strings.Cut(string(raw), ":")
	if !ok {
		return true
	}
	return password != user && passwordIsReal(password)
}
