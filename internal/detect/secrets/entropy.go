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
	for i := 0; i < len(text); {
		if !isEntropyByte(text[i]) {
			i++
			continue
		}
		start := i
		for i < len(text) && isEntropyByte(text[i]) {
			i++
		}
		if looksRandom(text, start, i) {
			cands = append(cands, candidate{start: start, end: i, rule: -1})
		}
	}
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
