package injection

import (
	"encoding/binary"
	"unicode"
	"unicode/utf8"
)

// normalize writes the matching form of text into n.b: ASCII letters lower
// case; look-alike letters (Cyrillic, Greek, full-width, mathematical,
// small capitals, circled, accented Latin) folded to ASCII; curly quotes and
// dashes to ASCII; invisible and format characters removed; every run of
// white space collapsed to one ' ', or to one '\n' when it holds a line
// break (role labels and headings are line-start markers). Rules match this
// form, so "Іgnоrе", "ｉｇｎｏｒｅ" and "ig\u200bnore" read as "ignore".
//
// When withMap is set it also records in n.src, for each byte of n.b, the
// offset in text of the character that produced it. Clean text never needs
// the map, so Scan builds it only once a phrase rule has matched.
//
// When unicodeFindings is set it appends the hidden_unicode, tag_smuggling
// and bidi_control findings of text to n.found, in text's offsets: they are
// found while the characters are being folded, at no extra pass.
func (n *normalizer) normalize(text string, withMap, unicodeFindings bool) {
	n.b = n.b[:0]
	n.src = n.src[:0]
	n.nonASCII = false
	if cap(n.b) < len(text) {
		n.b = make([]byte, 0, len(text)+len(text)/8)
	}
	n.appendForm(text, 0, len(text), withMap, unicodeFindings)
}

// appendForm appends to n.b the matching form of text[lo:hi], where lo is
// 0 or a cut (isCut): the form of a text is the forms of its pieces
// between cuts, one after the other. Characters are classified with their
// neighbours in the whole text.
func (n *normalizer) appendForm(text string, lo, hi int, withMap, unicodeFindings bool) {
	space := true // suppresses leading white space; at a cut, white space was just written
	for i := lo; i < hi; {
		if !withMap && i+8 <= hi {
			// Eight bytes of printable ASCII with single spaces are their
			// own matching form, lower-cased: the common case, at a few
			// operations a byte.
			if lower, ok := plainChunk(text, i, space); ok {
				n.b = binary.LittleEndian.AppendUint64(n.b, lower)
				space = lower>>56 == ' '
				i += 8
				continue
			}
		}
		c := text[i]
		if f := asciiFold[c]; f != 0 && !withMap {
			// Most text is ASCII letters, digits and punctuation: copied
			// lower case, one table lookup a byte, until anything else.
			b := n.b
			for {
				b = append(b, f)
				i++
				if i == hi {
					break
				}
				if f = asciiFold[text[i]]; f == 0 {
					break
				}
			}
			n.b = b
			space = false
			continue
		}
		if c < utf8.RuneSelf {
			switch {
			case c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f':
				if !space {
					n.emit(' ', i, withMap)
					space = true
				}
			case c == '\n':
				n.emitNewline(i, space, withMap)
				space = true
			default:
				if 'A' <= c && c <= 'Z' {
					c += 'a' - 'A'
				}
				n.emit(c, i, withMap)
				space = false
			}
			i++
			continue
		}
		n.nonASCII = true
		r, size := utf8.DecodeRuneInString(text[i:])
		if unicodeFindings {
			if skip := n.classify(text, i, r, size); skip > 0 {
				// A recognised sequence (an emoji subdivision flag) was
				// consumed whole; its tag characters are dropped.
				n.emitRune(0x1F3F4, i, withMap)
				space = false
				i += skip
				continue
			}
		}
		switch {
		case isInvisible(r):
			// Dropped: it must not split a word the rules look for.
		case r == 0x2028 || r == 0x2029 || r == 0x85:
			n.emitNewline(i, space, withMap)
			space = true
		case unicode.IsSpace(r):
			if !space {
				n.emit(' ', i, withMap)
				space = true
			}
		default:
			if f := foldRune(r); f != 0 {
				n.emit(f, i, withMap)
			} else {
				n.emitRune(unicode.ToLower(r), i, withMap)
			}
			space = false
		}
		i += size
	}
}

const (
	ones  uint64 = 0x0101010101010101
	highs uint64 = 0x8080808080808080
)

// plainChunk looks at text[i:i+8]: if it is printable ASCII with no two
// spaces in a row (nor a space first after one, when space is set), it
// returns it lower-cased, as a little-endian word.
func plainChunk(text string, i int, space bool) (uint64, bool) {
	x := load64(text, i)
	// A byte below 0x20 or above 0x7e (the borrow and carry tricks flag
	// it; a false flag only ever sits above a true one).
	if ((x-0x20*ones)&^x|(x+0x01*ones)|x)&highs != 0 {
		return 0, false
	}
	// Exact per byte: the high bit of each byte that is a space.
	v := x ^ 0x20*ones
	spaces := ^((v&^highs + ^highs) | v) & highs
	if spaces&(spaces<<8) != 0 || space && spaces&0x80 != 0 {
		return 0, false
	}
	// Upper-case letters: 'A' <= b < '['; every byte is below 0x80 here.
	upper := ((x | highs) - 'A'*ones) &^ ((x | highs) - '['*ones) & highs
	return x | upper>>2, true
}

// asciiFold maps the ASCII bytes copied as they are (letters lower-cased)
// to their matching form; 0 for white space, control characters and
// non-ASCII bytes, which need a closer look.
var asciiFold = func() (t [256]byte) {
	for c := 0x21; c < 0x7f; c++ {
		t[c] = byte(c)
		if 'A' <= c && c <= 'Z' {
			t[c] = byte(c + 'a' - 'A')
		}
	}
	return t
}()

// normalizer holds the matching form of one text; it is pooled, never
// shared between goroutines.
type normalizer struct {
	b        []byte
	src      []int32
	nonASCII bool
	found    []rawFinding
	cap      findingCap
	tally    unicodeTally
}

func (n *normalizer) emit(c byte, at int, withMap bool) {
	n.b = append(n.b, c)
	if withMap {
		n.src = append(n.src, int32(at))
	}
}

func (n *normalizer) emitRune(r rune, at int, withMap bool) {
	before := len(n.b)
	n.b = utf8.AppendRune(n.b, r)
	if withMap {
		for range len(n.b) - before {
			n.src = append(n.src, int32(at))
		}
	}
}

// emitNewline upgrades a just-written ' ' to '\n' so that a run of white
// space holding a line break becomes one '\n'.
func (n *normalizer) emitNewline(at int, space, withMap bool) {
	if space && len(n.b) > 0 {
		n.b[len(n.b)-1] = '\n'
		return
	}
	if len(n.b) > 0 {
		n.emit('\n', at, withMap)
	}
}

// origSpan maps [s,e) in n.b back to byte offsets in text. It needs the map
// (normalize withMap).
func (n *normalizer) origSpan(text string, s, e int) (int, int) {
	start := int(n.src[s])
	last := int(n.src[e-1])
	_, size := utf8.DecodeRuneInString(text[last:])
	return start, last + size
}

// isInvisible reports the characters that render as nothing and are dropped
// from the matching form (whether or not they are also a finding).
func isInvisible(r rune) bool {
	switch {
	case r == 0xAD, // soft hyphen
		r == 0x34F,               // combining grapheme joiner
		r == 0x61C,               // Arabic letter mark
		r == 0x115F, r == 0x1160, // Hangul fillers
		r == 0x17B4, r == 0x17B5, // Khmer inherent vowels
		r == 0x180E,                // Mongolian vowel separator
		0x200B <= r && r <= 0x200F, // zero-width space, (non-)joiner, LRM, RLM
		0x202A <= r && r <= 0x202E, // bidi embeddings and overrides
		0x2060 <= r && r <= 0x2064, // word joiner, invisible operators
		0x2066 <= r && r <= 0x206F, // bidi isolates, deprecated format characters
		r == 0x3164, r == 0xFFA0,   // Hangul fillers
		0xFE00 <= r && r <= 0xFE0F, // variation selectors
		r == 0xFEFF,                // byte order mark / zero-width no-break space
		0xFFF9 <= r && r <= 0xFFFB, // interlinear annotation
		0x1D173 <= r && r <= 0x1D17A,
		0xE0000 <= r && r <= 0xE007F, // tag characters
		0xE0100 <= r && r <= 0xE01EF: // variation selectors supplement
		return true
	case 0x300 <= r && r <= 0x36F: // combining diacritics: "i̇gnore" reads as "ignore"
		return true
	}
	return false
}

// foldRune returns the ASCII letter, digit or punctuation a look-alike
// character stands for, or 0. Only cheap, unambiguous cases are folded.
func foldRune(r rune) byte {
	switch {
	case 0xFF01 <= r && r <= 0xFF5E: // full-width ASCII
		c := byte(r - 0xFF01 + 0x21)
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		return c
	case 0x1D400 <= r && r <= 0x1D6A3: // mathematical alphanumeric letters: 13 alphabets of A-Z a-z
		k := (r - 0x1D400) % 52
		if k >= 26 {
			k -= 26
		}
		return byte('a' + k)
	case 0x1D7CE <= r && r <= 0x1D7FF: // mathematical digits
		return byte('0' + (r-0x1D7CE)%10)
	case 0x24B6 <= r && r <= 0x24CF: // circled capitals
		return byte('a' + r - 0x24B6)
	case 0x24D0 <= r && r <= 0x24E9: // circled small letters
		return byte('a' + r - 0x24D0)
	case 0x249C <= r && r <= 0x24B5: // parenthesised small letters
		return byte('a' + r - 0x249C)
	case 0x1F130 <= r && r <= 0x1F149, 0x1F150 <= r && r <= 0x1F169, 0x1F170 <= r && r <= 0x1F189: // squared and negative letters
		return byte('a' + (r-0x1F130)%32)
	case 0xC0 <= r && r <= 0x17F:
		if c := latinFold[r-0xC0]; c != ' ' {
			return c
		}
		return 0
	}
	return confusables[r]
}

// latinFold maps U+00C0..U+017F to base letters (' ' where there is none):
// accents must not hide "ïgnöre".
const latinFold = "" +
	"aaaaaaaceeeeiiii" + // C0-CF
	"dnooooo ouuuuyts" + // D0-DF
	"aaaaaaaceeeeiiii" + // E0-EF
	"dnooooo ouuuuyty" + // F0-FF
	"aaaaaaccccccccdd" + // 100-10F
	"ddeeeeeeeeeegggg" + // 110-11F
	"gggghhhhiiiiiiii" + // 120-12F
	"iiiijjkkklllllll" + // 130-13F
	"lllnnnnnnnnnoooo" + // 140-14F
	"oooorrrrrrssssss" + // 150-15F
	"ssttttttuuuuuuuu" + // 160-16F
	"uuuuwwyyyzzzzzzs" //  170-17F

// confusables are single look-alike letters from other scripts and
// punctuation variants, folded to ASCII.
var confusables = map[rune]byte{
	// Cyrillic
	'а': 'a', 'А': 'a', 'В': 'b', 'с': 'c', 'С': 'c', 'ԁ': 'd', 'е': 'e', 'Е': 'e', 'ё': 'e',
	'һ': 'h', 'Н': 'h', 'і': 'i', 'І': 'i', 'ї': 'i', 'ј': 'j', 'Ј': 'j', 'К': 'k', 'к': 'k',
	'ӏ': 'l', 'М': 'm', 'о': 'o', 'О': 'o', 'р': 'p', 'Р': 'p', 'ԛ': 'q', 'ѕ': 's', 'Ѕ': 's',
	'Т': 't', 'у': 'y', 'У': 'y', 'Ү': 'y', 'ү': 'y', 'х': 'x', 'Х': 'x', 'ԝ': 'w', 'Ԝ': 'w',
	// Greek
	'α': 'a', 'Α': 'a', 'Β': 'b', 'ε': 'e', 'Ε': 'e', 'Ζ': 'z', 'Η': 'h', 'ι': 'i', 'Ι': 'i',
	'κ': 'k', 'Κ': 'k', 'Μ': 'm', 'Ν': 'n', 'ν': 'v', 'ο': 'o', 'Ο': 'o', 'ρ': 'p', 'Ρ': 'p',
	'Τ': 't', 'υ': 'u', 'Υ': 'y', 'χ': 'x', 'Χ': 'x',
	// Latin small capitals and other look-alikes
	'ᴀ': 'a', 'ʙ': 'b', 'ᴄ': 'c', 'ᴅ': 'd', 'ᴇ': 'e', 'ɢ': 'g', 'ɡ': 'g', 'ʜ': 'h', 'ɪ': 'i',
	'ᴊ': 'j', 'ᴋ': 'k', 'ʟ': 'l', 'ᴍ': 'm', 'ɴ': 'n', 'ᴏ': 'o', 'ᴘ': 'p', 'ʀ': 'r', 'ꜱ': 's',
	'ᴛ': 't', 'ᴜ': 'u', 'ᴠ': 'v', 'ᴡ': 'w', 'ʏ': 'y', 'ᴢ': 'z', 'ı': 'i', 'ȷ': 'j', 'ℓ': 'l',
	// Armenian
	'օ': 'o', 'ս': 'u', 'հ': 'h',
	// punctuation
	'‘': '\'', '’': '\'', 'ʼ': '\'', '′': '\'', '‛': '\'', '“': '"', '”': '"', '„': '"', '″': '"',
	'‐': '-', '‑': '-', '‒': '-', '–': '-', '—': '-', '―': '-', '−': '-',
	'︱': '|', '▁': '_',
}
