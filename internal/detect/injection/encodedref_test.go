package injection

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
