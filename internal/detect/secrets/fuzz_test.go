package secrets

import (
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
)

// FuzzScan: whatever the text, Scan does not panic and keeps the contract:
// findings in bounds, ordered, not overlapping; where a URL rule's
// keyword occurs and hasUserinfo refuses it, its pattern does not match
// there (the check spares the regexp, never a finding); and a stream over
// it, cut at every byte, finds what Scan finds (checkStreamEveryByte).
func FuzzScan(f *testing.F) {
	r := rand.New(rand.NewPCG(6, 6))
	for _, g := range generators {
		text, _, _ := g.sample(r)
		f.Add(text)
	}
	f.Add("-----BEGIN RSA PRIVATE KEY-----\\nMIIE\\n-----END RSA PRIVATE KEY-----")
	f.Add("eyJ.eyJ.")
	f.Add("postgres://:@")
	f.Add("https://user:pass@host/x https://api.example.com/a@b postgresql+x://u:p@h ftp://a:b/@c")
	f.Add("mongodb+srv://u:p?@h redis://u:p#@h HTTPS://U:P@H ssh://u:p\f@h")
	d, err := New(Options{HighEntropy: true})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, text string) {
		checkFindings(t, text, Default().Scan(text, nil))
		checkFindings(t, text, d.Scan(text, nil))
		checkUserinfo(t, Default(), text)
		checkStreamEveryByte(t, Default(), text, true)
		checkStreamEveryByte(t, d, text, false)
	})
}

// checkStreamEveryByte: text streamed with a cut at every byte (every
// 64th of a long text) finishes with Scan's findings. With streamReach
// spaces after it, the cuts are also where the prefilter's limit falls in
// text; without (the high-entropy detector, whose pass over every byte
// of the spaces would slow the fuzzer tenfold), only its runs of entropy
// bytes are cut.
func checkStreamEveryByte(t *testing.T, d *Detector, text string, pad bool) {
	t.Helper()
	var cuts []int
	for c := 1; c <= len(text)+1; c += max(1, len(text)/64) {
		cuts = append(cuts, c)
		if pad {
			cuts = append(cuts, streamReach+c)
		}
	}
	slices.Sort(cuts)
	if pad {
		text += streamPad()
	}
	checkStream(t, d, text, nil, cuts, false)
}

// streamPad is streamReach spaces and one more, made once.
var streamPad = sync.OnceValue(func() string { return strings.Repeat(" ", streamReach+1) })

// checkUserinfo: at every keyword of a rule with needs, a pattern that
// matches there passes hasUserinfo.
func checkUserinfo(t *testing.T, d *Detector, text string) {
	t.Helper()
	d.pre.scan(text, func(h hit) {
		r := &d.rules[d.pre.keywords[h.keyword].rule]
		if r.needs == 0 {
			return
		}
		window := text[h.start:min(len(text), h.start+r.shape.get().maxLen)]
		if r.re().FindStringSubmatchIndex(window) != nil && !hasUserinfo(text, h.start, h.start+r.shape.get().maxLen, r.needs) {
			t.Fatalf("%s at %d of %q: the pattern matches, hasUserinfo refuses", r.kind, h.start, text)
		}
	})
}
