package injection

import (
	"encoding/hex"
	"math/rand/v2"
	"strings"
	"testing"
)

// refScanToken is scanToken as it was, each run of base64 bytes found
// byte by byte and the escapes counted in every token: the reference
// scanEveryToken scans with (FuzzScanEncoded).
func (d *Detector) refScanToken(text string, i, j, firstRun, firstLetters int, found []rawFinding, c *encodedCap) []rawFinding {
	tok := text[i:j]
	percent, escapes := countEscapes(tok[max(firstRun, 0):])
	if percent >= 3 && d.harmful(decodePercent(tok)) {
		return c.add(found, rawFinding{Kind: KindEncodedPayload, Start: i, End: j})
	}
	if escapes >= 4 && d.harmful(decodeEscapes(tok)) {
		return c.add(found, rawFinding{Kind: KindEncodedPayload, Start: i, End: j})
	}
	// base64 and hex runs: a token such as "cfg=L2Jp..." holds a key and a run.
	for k := 0; k < len(tok); {
		if !isBase64Byte(tok[k]) {
			k++
			continue
		}
		m, letters := firstRun, firstLetters
		if k > 0 || m < 0 {
			m, letters = base64End(tok, k, nil)
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

// refHexMayBeText is how harmfulRun sniffed a hex run before
// hexMayBeText: its first sniffLen characters decoded by encoding/hex,
// then looksLikeText.
func refHexMayBeText(run string) bool {
	var out [sniffLen]byte
	m, err := hex.Decode(out[:], []byte(run[:min(len(run), sniffLen)&^1]))
	return err == nil && looksLikeText(out[:m])
}

// TestHexMayBeText: hexMayBeText decides as refHexMayBeText on runs of
// hex digits of even length that decode to text, to binary, and to text
// with a few bytes of binary (around the 90% looksLikeText asks).
func TestHexMayBeText(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 9))
	for range raceScaled(30000) {
		b := make([]byte, 8+r.IntN(60))
		bad := r.IntN(4) // in ten bytes
		for k := range b {
			b[k] = byte(0x20 + r.IntN(0x5F))
			if r.IntN(10) < bad {
				b[k] = byte(r.IntN(256))
			}
		}
		run := hex.EncodeToString(b)
		if r.IntN(2) == 0 {
			run = strings.ToUpper(run)
		}
		if got, want := hexMayBeText(run), refHexMayBeText(run); got != want {
			t.Fatalf("hexMayBeText(%q) = %v, want %v", run, got, want)
		}
	}
}
