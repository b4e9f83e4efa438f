package secrets

import (
	"math"
	"strings"
)

const (
	entropyMinLen = 20
	// entropyMaxLen: longer runs are data (images, archives, keys' own
	// rules), not credentials someone pasted.
	entropyMaxLen = 256
)

// appendHighEntropy adds the runs of base64-ish characters that look
// random: 20 to 256 long, letters and digits mixed, and a Shannon entropy
// per character of at least 0.85 × log2 of the alphabet the run could use.
// It skips what is random by nature but no secret: hex-only runs (hashes,
// git SHAs, UUIDs), subresource integrity values (sha512-…) and data URIs.
func appendHighEntropy(text string, cands []candidate) []candidate {
	runs := entropyRuns{start: -1}
	return runs.appendRandom(text, true, cands)
}

// entropyRuns is appendHighEntropy's place in a text that grows: runs
// before at are judged; start, when not -1, is where a run that reaches at
// began.
type entropyRuns struct{ at, start int }

// appendRandom judges the runs of text from the place on, and appends
// those that look random. Unless final (text is whole), a run that reaches
// the text's end is left open: the next bytes may lengthen it.
func (e *entropyRuns) appendRandom(text string, final bool, cands []candidate) []candidate {
	i, start := e.at, e.start
	for {
		if start < 0 {
			for i < len(text) && !isEntropyByte(text[i]) {
				i++
			}
			if i == len(text) {
				break
			}
			start = i
		}
		for i < len(text) && isEntropyByte(text[i]) {
			i++
		}
		if i == len(text) && !final {
			break
		}
		if looksRandom(text, start, i) {
			cands = append(cands, candidate{start: start, end: i, rule: -1})
		}
		start = -1
	}
	e.at, e.start = i, start
	return cands
}

func isEntropyByte(c byte) bool {
	return isBase64Byte(c) || c == '-' || c == '_'
}

func looksRandom(text string, start, end int) bool {
	run := strings.TrimRight(text[start:end], "=")
	if len(run) < entropyMinLen || end-start > entropyMaxLen {
		return false
	}
	if strings.HasSuffix(text[:start], "base64,") || strings.HasPrefix(run, "sha") && strings.Contains(run[:min(len(run), 7)], "-") {
		return false
	}
	hexOnly, digit, letter := true, false, false
	var counts [256]int
	for i := 0; i < len(run); i++ {
		c := run[i]
		counts[c]++
		switch {
		case '0' <= c && c <= '9':
			digit = true
		case 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F':
			letter = true
		case c == '-':
		default:
			letter = true
			hexOnly = false
		}
	}
	if hexOnly || !digit || !letter || !mixedClasses(run) || strings.Contains(run, "//") || looksLikePlaceholder(run) {
		return false
	}
	h := 0.0
	n := float64(len(run))
	for _, c := range counts {
		if c > 0 {
			p := float64(c) / n
			h -= p * math.Log2(p)
		}
	}
	return h >= 0.85*math.Log2(min(n, 64))
}
