package injection

import (
	"encoding/base64"
	"encoding/hex"
	"math/bits"
	"strings"
)

// Encoded payloads. Text is cut into tokens at white space, quotes and
// brackets; a token is a candidate when it holds a base64 or hex run of at
// least minEncodedLen characters, three or more %XX escapes, or four or
// more \xXX escapes. A candidate is decoded only as far as needed to see
// whether it is text at all (images, hashes, UUIDs and compressed data are
// not, and are dropped after decoding a few dozen bytes); text is decoded in
// full (up to maxDecoded) and reported when it holds a shell command or
// injection phrasing. One level deep: a payload inside a payload is not
// unwrapped.

const (
	minEncodedLen = 16       // "curl x|sh" is 12 bytes, 16 base64 characters
	sniffLen      = 96       // encoded characters decoded to decide "is it text?"
	maxDecoded    = 64 << 10 // encoded characters decoded in full, per candidate
)

// shellCommand matches, in decoded lower-case text, commands that have no
// business hiding inside an encoding: download-and-run, reverse shells,
// destructive or privilege-raising commands, interpreter one-liners.
var shellCommand = newLazyRegexp(`\b(?:curl|wget|iwr|invoke-webrequest)\b[^\n|;]{0,200}\|\s*(?:sudo\s+)?(?:ba|z|k|da|c|fi)?sh\b` +
	`|/dev/(?:tcp|udp)/` +
	`|\b(?:ba|z|k)?sh\s+-i\b` +
	`|\bnc(?:at)?\s+(?:\S+\s+){0,3}-[a-z]*e\b` +
	`|\bmkfifo\b` +
	`|\brm\s+-[a-z]*(?:rf|fr)[a-z]*\b|\brm\s+-r\s+-f\b` +
	`|\bchmod\s+(?:\+x|[0-7]{3,4})\s` +
	`|\b(?:python[0-9.]*|perl|ruby|php|node)\s+-[ce]\s` +
	`|\bpowershell(?:\.exe)?\b[^\n]{0,40}\s-(?:e|enc|encodedcommand|c|command|nop|w)\b` +
	`|\b(?:iex|invoke-expression)\b` +
	`|\bbase64\s+(?:-d|--decode)\b` +
	`|\b(?:eval|exec|system|popen)\s*\(` +
	`|\bsudo\s+\S` +
	`|\bcrontab\s` +
	`|\bcmd(?:\.exe)?\s+/c\b` +
	`|\b(?:cat|type|less|more|head|tail|cp|scp)\s+\S*(?:\.ssh|id_rsa|\.env\b|/etc/passwd|/etc/shadow|credentials|\.aws)` +
	`|\bdd\s+if=` +
	`|:\(\)\s*\{\s*:\s*\|\s*:\s*&\s*\}\s*;\s*:` +
	`|\b(?:bash|sh|zsh)\s+-c\s` +
	`|&&\s*(?:sh|bash|\./|/tmp/)`)

// scanEncoded appends an encoded_payload finding for each encoded run of
// text that decodes to a command or to injection phrasing.
//
// Only tokens of minEncodedLen bytes or more matter, so it looks at the
// last bytes of the next minEncodedLen first: a break there means no such
// token starts before it, and it jumps past it (most text is words, and
// most bytes are never looked at). The common breaks (white space, the
// bytes of UTF-8, commas) are found eight bytes at once, in four blocks
// ahead: where each holds one, no token from one to the next is long
// enough, and it jumps past the last. Where the first holds none, all
// breaks of the next minEncodedLen bytes are looked up, without a branch.
func (d *Detector) scanEncoded(text string, found []rawFinding, runs *letterRun) []rawFinding {
	return d.scanEncodedCapped(text, found, runs, encodedCap{max: d.maxEncoded, hi: len(text)})
}

// scanEncodedCapped is scanEncoded with its findings capped by c.
func (d *Detector) scanEncodedCapped(text string, found []rawFinding, runs *letterRun, c encodedCap) []rawFinding {
	c.base = len(found)
	// i is 0 or follows a break: where a token may start.
	for i := 0; i+minEncodedLen <= len(text); {
		if i+40 <= len(text) {
			// The last common break of four blocks of eight, each but
			// the last with one: no token between two of them is long.
			// Where the first has none, a token most likely starts.
			b := text[i+8 : i+40]
			if m1 := commonBreaks(load64(b, 0)); m1 != 0 {
				m2, m3, m4 := commonBreaks(load64(b, 8)), commonBreaks(load64(b, 16)), commonBreaks(load64(b, 24))
				switch {
				case m2 != 0 && m3 != 0 && m4 != 0:
					i += 32 + lastByte(m4) + 1
				case m2 == 0:
					i += 8 + lastByte(m1) + 1
				case m3 == 0:
					i += 16 + lastByte(m2) + 1
				default:
					i += 24 + lastByte(m3) + 1
				}
				continue
			}
		} else if m := commonBreaks(load64(text, i+minEncodedLen-8)); m != 0 {
			i += minEncodedLen - 8 + lastByte(m) + 1
			continue
		}
		c0, c1 := classBits(text, i), classBits(text, i+8)
		if m := uint(uint8(c1))<<8 | uint(uint8(c0)); m != 0 {
			// A token starting before the last break ends by it: too short.
			i += bits.Len(m)
			continue
		}
		// The base64 run the token starts with, found here and not again
		// by scanToken: its bytes are no token breaks, so the token goes
		// on from its end. A blob of megabytes is then read once, not twice.
		// Nor are they escapes: the token's first 16 bytes and what
		// tokenEnd reads tell whether it holds any. Most runs end in the
		// first 16 bytes ("https:", a date, "key="), and the lookups of
		// their breaks told where.
		run, letters := i, i
		if nb := uint(uint8(c1>>16))<<8 | uint(uint8(c0>>16)); nb != 0 {
			run += bits.TrailingZeros(nb)
		} else {
			run, letters = base64End(text, i, runs)
		}
		j, escapes, notBase64 := tokenEndBits(text, max(run, i+minEncodedLen), i, runs)
		escapes = escapes || (c0|c1)>>8&0xFF != 0
		if j-i <= 64 {
			// Most tokens are short (a URL, a date, an id): the lookups
			// of their breaks told which bytes are no base64 bytes, and
			// their runs are found in those bits.
			notBase64 = (notBase64 | uint64(uint8(c1>>16))<<8 | uint64(uint8(c0>>16))) & lowBits(j-i)
			found = d.scanShortToken(text, i, j, run-i, notBase64, escapes, found, &c)
		} else {
			found = d.scanToken(text, i, j, run-i, letters-i, escapes, found, &c)
		}
		i = j
	}
	return found
}

// lastByte is the index of the last byte of m's high bits (m != 0).
func lastByte(m uint64) int { return (63 - bits.LeadingZeros64(m)) >> 3 }

// commonBreaks has the high bit set of the bytes of x (eight bytes of
// text) that are white space, commas or from 0x80 up: token breaks, most
// of those of text. Each byte is tested on its own: no borrow crosses
// from one to the next (y's bytes are all 0x80 or more).
func commonBreaks(x uint64) uint64 {
	y := x | highs
	white := (y-0x09*ones)&^(y-0x0E*ones) | (y-0x20*ones)&^(y-0x21*ones) // \t \n \v \f \r and ' '
	comma := (y - ','*ones) &^ (y - (','+1)*ones)
	return (white | comma | x) & highs
}

func isTokenBreak(c byte) bool { return tokenBreaks[c] }

// classBits has bit k set where text[i+k] is a token break, for k < 8,
// bit 8+k where it begins an escape ('%' or '\\'), and bit 16+k where it
// is no base64 byte: eight lookups with no branch, where a walk byte by
// byte stopped at an unforeseeable byte.
func classBits(text string, i int) uint32 {
	b := text[i : i+8]
	return tokenClass[b[0]] | tokenClass[b[1]]<<1 | tokenClass[b[2]]<<2 | tokenClass[b[3]]<<3 |
		tokenClass[b[4]]<<4 | tokenClass[b[5]]<<5 | tokenClass[b[6]]<<6 | tokenClass[b[7]]<<7
}

var tokenClass = func() (t [256]uint32) {
	for c := range t {
		if tokenBreaks[c] {
			t[c] = 1
		}
		if !base64Bytes[c] {
			t[c] |= 1 << 16
		}
	}
	t['%'] |= 1 << 8
	t['\\'] |= 1 << 8
	return t
}()

// tokenEnd returns the index of the first token break at or after
// text[i], or len(text), and whether text[i:end] holds a '%' or a '\\';
// eight letters at a time where it can (letters are never breaks nor
// escapes): a long token is a blob.
func tokenEnd(text string, i int, runs *letterRun) (end int, escapes bool) {
	end, escapes, _ = tokenEndBits(text, i, i, runs)
	return end, escapes
}

// tokenEndBits is tokenEnd, with the bit k-base set in notBase64 for each
// byte text[k] it read that is no base64 byte, for k-base below 64 (and
// some bits past end).
func tokenEndBits(text string, i, base int, runs *letterRun) (end int, escapes bool, notBase64 uint64) {
	if i+8 <= len(text) && allLetters(load64(text, i)) {
		i = runs.lettersEnd(text, i) // letters: base64 bytes
	}
	var esc uint32
	for ; i+8 <= len(text); i += 8 {
		c := classBits(text, i)
		notBase64 |= uint64(uint8(c>>16)) << uint(i-base)
		if m := uint8(c); m != 0 {
			n := bits.TrailingZeros8(m)
			return i + n, esc != 0 || c>>8&(1<<n-1) != 0, notBase64
		}
		esc |= c >> 8 & 0xFF
	}
	for ; i < len(text) && !isTokenBreak(text[i]); i++ {
		esc |= tokenClass[text[i]] >> 8 & 1
		notBase64 |= uint64(notBase64Bit[text[i]]) << uint(i-base)
	}
	return i, esc != 0, notBase64
}

// lowBits has the n lowest bits set (n <= 64).
func lowBits(n int) uint64 { return uint64(1)<<uint(n) - 1 }

// base64End returns the end of the run of base64 bytes at text[i:], and
// where lettersEnd stopped in it: text[i:letters] holds only letters, so
// a look for other bytes of the run ('-', '_') starts there.
func base64End(text string, i int, runs *letterRun) (end, letters int) {
	letters = i
	if i+8 <= len(text) && allLetters(load64(text, i)) {
		letters = runs.lettersEnd(text, i)
	}
	for end = letters; end+8 <= len(text); end += 8 {
		if m := notBase64Bits(text, end); m != 0 {
			return end + bits.TrailingZeros8(m), letters
		}
	}
	for ; end < len(text) && isBase64Byte(text[end]); end++ {
	}
	return end, letters
}

// countEscapes counts in tok the %XX escapes and the \xXX escapes. It
// jumps from '%' to '%' and from '\\' to '\\': a long token has few or none.
func countEscapes(tok string) (percent, escapes int) {
	for k := 0; ; k++ {
		q := strings.IndexByte(tok[k:], '%')
		if q < 0 {
			break
		}
		k += q
		if k+2 < len(tok) && isHex(tok[k+1]) && isHex(tok[k+2]) {
			percent++
		}
	}
	for k := 0; ; k++ {
		q := strings.IndexByte(tok[k:], '\\')
		if q < 0 {
			break
		}
		k += q
		if k+3 < len(tok) && tok[k+1] == 'x' && isHex(tok[k+2]) && isHex(tok[k+3]) {
			escapes++
		}
	}
	return percent, escapes
}

var tokenBreaks = func() (t [256]bool) {
	for _, c := range []byte(" \t\n\r\v\f\"'`<>()[]{},;|") {
		t[c] = true
	}
	for c := 0x80; c < 0x100; c++ {
		t[c] = true
	}
	return t
}()

// scanToken looks at one token text[i:j] for the three encodings, and
// adds what it finds to found through c.
// firstRun, when not negative, is where the run of base64 bytes that
// begins the token ends, and firstLetters where its letters end
// (base64End(tok, 0)), already known: no '%' nor '\\' is a base64 byte,
// so the escapes are looked for only past that run (a blob of megabytes
// is not read again for them), and only when mayEscape: the token holds a
// '%' or a '\\' (the walk saw every byte of it that is no base64 byte).
func (d *Detector) scanToken(text string, i, j, firstRun, firstLetters int, mayEscape bool, found []rawFinding, c *encodedCap) []rawFinding {
	tok := text[i:j]
	if mayEscape && d.escapedPayload(tok, firstRun) {
		return c.add(found, rawFinding{Kind: KindEncodedPayload, Start: i, End: j})
	}
	// base64 and hex runs: a token such as "cfg=L2Jp..." holds a key and a run.
	for k := 0; k < len(tok); {
		m, letters := firstRun, firstLetters
		if k > 0 || m < 0 {
			// Only runs of minEncodedLen matter: one starting before the
			// last byte of the next minEncodedLen that is no base64 byte
			// ends by it.
			if k+minEncodedLen > len(tok) {
				break
			}
			if nb := uint(notBase64Bits(tok, k+8))<<8 | uint(notBase64Bits(tok, k)); nb != 0 {
				k += bits.Len(nb)
				continue
			}
			m, letters = base64End(tok, k, nil)
		} else if m == 0 {
			k++
			continue
		}
		end := m
		for end < len(tok) && end < m+2 && tok[end] == '=' {
			end++
		}
		if m-k >= minEncodedLen && d.harmfulRun(tok[k:m], letters-k) {
			found = c.add(found, rawFinding{Kind: KindEncodedPayload, Start: i + k, End: i + end})
		}
		k = end
	}
	return found
}

// escapedPayload reports whether tok decodes from %XX or \\xXX escapes to
// a command or injection phrasing; none is in its first firstRun bytes
// (base64 bytes), when firstRun is not negative.
func (d *Detector) escapedPayload(tok string, firstRun int) bool {
	percent, escapes := countEscapes(tok[max(firstRun, 0):])
	return percent >= 3 && d.harmful(decodePercent(tok)) || escapes >= 4 && d.harmful(decodeEscapes(tok))
}

// scanShortToken is scanToken of a token text[i:j] of 64 bytes at most,
// whose bytes that are no base64 bytes have their bits in notBase64 (the
// bit k for text[i+k]): its base64 runs, the runs of clear bits, are
// found with no lookup of a byte.
func (d *Detector) scanShortToken(text string, i, j, firstRun int, notBase64 uint64, mayEscape bool, found []rawFinding, c *encodedCap) []rawFinding {
	tok := text[i:j]
	if mayEscape && d.escapedPayload(tok, firstRun) {
		return c.add(found, rawFinding{Kind: KindEncodedPayload, Start: i, End: j})
	}
	for runs := ^notBase64 & lowBits(len(tok)); runs != 0; {
		k := bits.TrailingZeros64(runs)
		m := k + bits.TrailingZeros64(^(runs >> uint(k)))
		runs &^= lowBits(m)
		if m-k < minEncodedLen {
			continue
		}
		end := m
		for end < len(tok) && end < m+2 && tok[end] == '=' {
			end++
		}
		if d.harmfulRun(tok[k:m], 0) {
			found = c.add(found, rawFinding{Kind: KindEncodedPayload, Start: i + k, End: i + end})
		}
	}
	return found
}

// notBase64Bits has bit k set where s[i+k] is no base64 byte, for k < 8.
func notBase64Bits(s string, i int) uint8 {
	b := s[i : i+8]
	return notBase64Bit[b[0]] | notBase64Bit[b[1]]<<1 | notBase64Bit[b[2]]<<2 | notBase64Bit[b[3]]<<3 |
		notBase64Bit[b[4]]<<4 | notBase64Bit[b[5]]<<5 | notBase64Bit[b[6]]<<6 | notBase64Bit[b[7]]<<7
}

var notBase64Bit = func() (t [256]uint8) {
	for c := range t {
		if !base64Bytes[c] {
			t[c] = 1
		}
	}
	return t
}()

// holdsEither reports whether s holds the byte a or the byte b, eight
// bytes at a time: two calls of strings.IndexByte cost more on the short
// strings it is asked about (tokens, runs), which mostly hold neither.
func holdsEither(s string, a, b byte) bool {
	if len(s) < 8 {
		return strings.IndexByte(s, a) >= 0 || strings.IndexByte(s, b) >= 0
	}
	for i := 0; ; i += 8 {
		i = min(i, len(s)-8) // the last eight bytes, read again in part
		x := load64(s, i)
		p, q := x^uint64(a)*ones, x^uint64(b)*ones
		if ((p-ones)&^p|(q-ones)&^q)&highs != 0 {
			return true
		}
		if i == len(s)-8 {
			return false
		}
	}
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func isBase64Byte(c byte) bool { return base64Bytes[c] }

var base64Bytes = func() (t [256]bool) {
	for c := range t {
		t[c] = 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '+' || c == '/' || c == '-' || c == '_'
	}
	return t
}()

// harmfulRun decodes a base64 or hex run (padding stripped) and judges it.
// Its first letters bytes are letters (base64End).
func (d *Detector) harmfulRun(run string, letters int) bool {
	allHex := true
	for k := 0; k < len(run); k++ {
		if !isHex(run[k]) {
			allHex = false
			break
		}
	}
	if allHex && len(run)%2 == 0 && hexMayBeText(run) {
		full := run[:min(len(run), maxDecoded)&^1]
		if b, err := hex.DecodeString(full); err == nil && d.harmful(b) {
			return true
		}
	}
	enc := base64.RawStdEncoding
	if holdsEither(run[letters:], '-', '_') {
		enc = base64.RawURLEncoding
	}
	// A run may be glued to a word ("xY3VybC..."): try the alignments.
	for shift := 0; shift < 4 && shift+minEncodedLen <= len(run); shift++ {
		body := run[shift:]
		sniff := body[:min(len(body), sniffLen)&^3]
		if !mayBeText(enc, sniff) {
			continue // most runs: read where they are, not copied
		}
		var in, out [sniffLen]byte
		n := copy(in[:], sniff)
		m, err := enc.Decode(out[:], in[:n])
		if err != nil || !looksLikeText(out[:m]) {
			continue
		}
		full := body[:min(len(body), maxDecoded)]
		if len(full)%4 == 1 {
			full = full[:len(full)-1]
		}
		b, err := enc.DecodeString(full)
		if err != nil {
			return false
		}
		return d.harmful(b)
	}
	return false
}

// hexMayBeText reports whether the decoding of the first sniffLen
// characters of run (hex digits, an even number) passes looksLikeText.
// It decodes them itself, and stops where too many bytes are no text
// (most hex runs are hashes and ids).
func hexMayBeText(run string) bool {
	n := min(len(run), sniffLen) &^ 1
	np := 0
	for k := 0; k < n; k += 2 {
		np += nonPrintable[hexValues[run[k]]<<4|hexValues[run[k+1]]]
		if np*10 > n/2 {
			return false
		}
	}
	return n/2 >= 8
}

// hexValues are the values of the hex digits.
var hexValues = func() (t [256]byte) {
	for c := range t {
		if isHex(byte(c)) {
			t[c] = unhex(byte(c))
		}
	}
	return t
}()

// mayBeText reports whether in (which decodes to 3*len(in)/4 bytes) could
// pass looksLikeText, from its first 16 characters only: most runs of
// base64 characters are paths or identifiers that decode to binary, and 12
// bytes tell. It never rejects what looksLikeText would accept. The 16
// characters are decoded here, with a table (a run has neither padding nor
// line breaks): it is called for every run of 16 base64 characters and
// more, up to four times (the alignments), and enc.Decode cost four times
// as much.
func mayBeText[S string | []byte](enc *base64.Encoding, in S) bool {
	values := &stdValues
	if enc == base64.RawURLEncoding {
		values = &urlValues
	}
	// Most runs fail at their first four characters: np only grows.
	np, limit := 0, len(in)*3/4
	for g := 0; g+4 <= min(len(in), 16); g += 4 {
		a, b, c, d := values[in[g]], values[in[g+1]], values[in[g+2]], values[in[g+3]]
		if (a|b|c|d)&0x80 != 0 {
			return false // not of this alphabet: enc.Decode fails
		}
		x := uint32(a)<<18 | uint32(b)<<12 | uint32(c)<<6 | uint32(d)
		np += nonPrintable[x>>16] + nonPrintable[x>>8&0xFF] + nonPrintable[x&0xFF]
		if np*10 > limit {
			return false
		}
	}
	return true
}

// stdValues and urlValues are the values of the characters of the two
// alphabets, 0xFF for the others.
var stdValues, urlValues = base64Values("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"),
	base64Values("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")

func base64Values(alphabet string) (t [256]byte) {
	for i := range t {
		t[i] = 0xFF
	}
	for i := range len(alphabet) {
		t[alphabet[i]] = byte(i)
	}
	return t
}

// nonPrintable is 1 for the bytes looksLikeText does not count as text.
var nonPrintable = func() (t [256]int) {
	for c := range t {
		if !(0x20 <= c && c < 0x7F || c == '\n' || c == '\t' || c == '\r') {
			t[c] = 1
		}
	}
	return t
}()

// looksLikeText reports whether at least 90% of b is printable ASCII or
// white space: decoded binary (images, hashes) fails at once.
func looksLikeText(b []byte) bool {
	if len(b) < 8 {
		return false
	}
	printable := 0
	for _, c := range b {
		if 0x20 <= c && c < 0x7F || c == '\n' || c == '\t' || c == '\r' {
			printable++
		}
	}
	return printable*10 >= len(b)*9
}

// harmful reports whether decoded text holds a shell command or injection
// phrasing (the phrase rules of d, run on the decoded text).
func (d *Detector) harmful(decoded []byte) bool {
	if !looksLikeText(decoded) {
		return false
	}
	lower := make([]byte, len(decoded))
	for k, c := range decoded {
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		lower[k] = c
	}
	if mayMatchShellCommand(lower) && shellCommand.Match(lower) {
		return true
	}
	s := scanners.Get().(*scanner)
	defer putScanner(s)
	s.n.normalize(string(decoded), false, false)
	return d.matchPhrases(s, s.n.b, true)
}

func decodePercent(tok string) []byte {
	out := make([]byte, 0, len(tok))
	for k := 0; k < len(tok); k++ {
		switch {
		case tok[k] == '%' && k+2 < len(tok) && isHex(tok[k+1]) && isHex(tok[k+2]):
			out = append(out, unhex(tok[k+1])<<4|unhex(tok[k+2]))
			k += 2
		case tok[k] == '+':
			out = append(out, ' ')
		default:
			out = append(out, tok[k])
		}
	}
	return out
}

func decodeEscapes(tok string) []byte {
	out := make([]byte, 0, len(tok))
	for k := 0; k < len(tok); k++ {
		if tok[k] == '\\' && k+3 < len(tok) && tok[k+1] == 'x' && isHex(tok[k+2]) && isHex(tok[k+3]) {
			out = append(out, unhex(tok[k+2])<<4|unhex(tok[k+3]))
			k += 3
			continue
		}
		out = append(out, tok[k])
	}
	return out
}

func unhex(c byte) byte {
	switch {
	case '0' <= c && c <= '9':
		return c - '0'
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10
	}
	return c - 'A' + 10
}
