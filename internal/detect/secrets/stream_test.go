package secrets

import (
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/mcpgate/mcpgate/internal/corpus"
	"github.com/mcpgate/mcpgate/internal/detect"
)

// streamDetectors are the detectors the stream tests compare: the default
// rules, and every rule with the high-entropy heuristic.
func streamDetectors(t testing.TB) []*Detector {
	t.Helper()
	d, err := New(Options{HighEntropy: true})
	if err != nil {
		t.Fatal(err)
	}
	return []*Detector{Default(), d}
}

// streamFinish advances a stream of d over text's prefixes ending at each
// cut (in order; a cut past the text is the whole text), and finishes it,
// appending to a dst that holds a finding already.
func streamFinish(d *Detector, text string, cuts []int, copies bool) []detect.Finding {
	s := d.Stream()
	for _, c := range cuts {
		piece := text[:min(c, len(text))]
		if copies {
			piece = strings.Clone(piece) // the bytes count, not the string
		}
		s.Advance(piece)
	}
	return s.Finish(text, []detect.Finding{{Kind: "earlier"}})
}

// checkStream: the stream's findings are Scan's (want, or Scan's when nil).
func checkStream(t *testing.T, d *Detector, text string, want []detect.Finding, cuts []int, copies bool) {
	t.Helper()
	if want == nil {
		want = d.Scan(text, []detect.Finding{{Kind: "earlier"}})
	}
	if got := streamFinish(d, text, cuts, copies); !slices.Equal(got, want) {
		t.Fatalf("high entropy %v, %d bytes cut at %v:\nstream %v\nscan   %v", d.highEntropy, len(text), cuts, got, want)
	}
}

// plantedText is corpus text with a sample of every generator planted in
// it (several times), keyword floods, keyword soup and random bytes, about
// size bytes: where a cut can fall inside keywords, secrets, PEM blocks,
// runs of entropy bytes and multi-byte UTF-8.
func plantedText(r *rand.Rand, size int) string {
	mixed := corpus.Mixed(64 << 10)
	var b strings.Builder
	planted := 0
	for i := 0; b.Len() < size; i++ {
		switch i % 6 {
		case 0:
			from := r.IntN(len(mixed))
			b.WriteString(mixed[from:min(len(mixed), from+r.IntN(4<<10))])
		case 1, 3, 4:
			text, _, _ := generators[planted%len(generators)].sample(r)
			b.WriteString(text)
			planted++
		case 2:
			unit := []string{"sk-_", "eyJ-", "https://a1 ", "postgres://a:b ", "-----BEGIN PRIVATE KEY-----\nMIIE",
				"PuTTY-User-Key-File-2: x\nPrivate-Lines: 1\nPrivate-MAC: ", "ä€𝄞", "Zx9-Qw_3"}[r.IntN(8)]
			b.WriteString(strings.Repeat(unit, 1+r.IntN(40)))
		case 5:
			b.WriteString(keywordSoup(r, Default().pre, r.IntN(512)))
			b.Write(randomBytes(r, r.IntN(64)))
		}
		b.WriteString([]string{" ", "", "\n", "_", "-", "@", ":", "é"}[r.IntN(8)])
	}
	return b.String()
}

// randomCuts returns n cut points in [0, size], in order, duplicates kept.
func randomCuts(r *rand.Rand, n, size int) []int {
	cuts := make([]int, n)
	for i := range cuts {
		cuts[i] = r.IntN(size + 1)
	}
	slices.Sort(cuts)
	return cuts
}

// evenCuts cuts size into pieces of piece bytes, as a pipe delivers them.
func evenCuts(piece, size int) []int {
	var cuts []int
	for c := piece; c < size+piece; c += piece {
		cuts = append(cuts, min(c, size))
	}
	return cuts
}

// TestStreamFindsWhatScanFinds: whatever the cuts, a stream over texts of
// every kind of secret finishes with Scan's findings.
func TestStreamFindsWhatScanFinds(t *testing.T) {
	r := rand.New(rand.NewPCG(14, 2))
	texts, sequences, pieces := 3, 12, []int{1 << 20, 64 << 10, 4 << 10, 333}
	if raceEnabled {
		// The race detector slows the rules' regexps tenfold.
		texts, sequences, pieces = 1, 3, []int{64 << 10, 333}
	}
	for range texts {
		text := plantedText(r, 3*streamReach+r.IntN(streamReach))
		for _, d := range streamDetectors(t) {
			want := d.Scan(text, []detect.Finding{{Kind: "earlier"}})
			if len(want) < len(generators) {
				t.Fatalf("the planted text holds %d findings", len(want))
			}
			checkStream(t, d, text, want, nil, false)
			for _, piece := range pieces {
				checkStream(t, d, text, want, evenCuts(piece, len(text)), false)
			}
			for n := range sequences {
				checkStream(t, d, text, want, randomCuts(r, 1+n*n, len(text)), n%4 == 0)
			}
		}
	}
}

// TestStreamEveryCut: each sample of every generator, and texts where a
// match's end is open (a PuTTY MAC, a PEM block cut short, runs of entropy
// bytes), cut at every point of it, and every point where the prefilter's
// limit falls in it, in one stream; then single cuts there.
func TestStreamEveryCut(t *testing.T) {
	r := rand.New(rand.NewPCG(14, 3))
	var samples []string
	for _, g := range generators {
		text, _, _ := g.sample(r)
		samples = append(samples, text)
	}
	putty, _ := genPuTTY(r)
	samples = append(samples,
		putty+"\n"+putty, putty+"abc", "x"+putty, putty[:len(putty)-1],
		strings.Repeat("PuTTY-User-Key-File-3: ", 3)+putty,
		pemBlock(r, "RSA PRIVATE KEY", "\n", true),
		pemBlock(r, "PRIVATE KEY", `\n`, false)+"-----BEGIN EC PRIVATE KEY-----\n",
		"Zx9-Qw_3Zx9-Qw_3Zx9-Qw_3Zx9-Qw_3", "é"+strings.Repeat("aZ3-", 80), "sk-_eyJ-https://a1 ")
	pads := []string{" ", "a", "f0"} // ends a token, lengthens it, lengthens a MAC
	if raceEnabled {
		pads = pads[2:]
	}
	for _, d := range streamDetectors(t) {
		for _, sample := range samples {
			for _, pad := range pads {
				text := sample + strings.Repeat(pad, (streamReach+len(sample)+64)/len(pad))
				var cuts []int
				for c := 1; c <= len(sample)+1; c++ {
					cuts = append(cuts, c, streamReach+c)
				}
				slices.Sort(cuts)
				checkStream(t, d, text, nil, cuts, false)
				for range 4 {
					at := r.IntN(len(sample) + 2)
					checkStream(t, d, text, nil, []int{at, streamReach + at}, false)
					checkStream(t, d, text, nil, []int{streamReach + at}, false)
				}
			}
		}
	}
}

// TestStreamReachCoversEveryPattern: a pattern's attempt at a keyword reads
// its longest match and the byte after it, within streamReach.
func TestStreamReachCoversEveryPattern(t *testing.T) {
	longest := 0
	for _, r := range rules {
		if r.match != nil {
			continue
		}
		shape, err := shapeOf(r.kind, r.pattern, r.keywords, r.back, r.leftBound)
		if err != nil {
			t.Fatal(err)
		}
		longest = max(longest, shape.maxLen+1)
	}
	if longest > streamReach {
		t.Errorf("a pattern reads %d bytes past its keyword, streamReach is %d", longest, streamReach)
	}
}

// TestStreamEndsAsTold: a stream advanced with a text that does not
// continue the last one, finished twice, or stopped and finished, still
// answers Scan's findings, and Stop may come after Finish.
func TestStreamEndsAsTold(t *testing.T) {
	text := plantedText(rand.New(rand.NewPCG(14, 4)), 2*streamReach)
	d := Default()
	want := d.Scan(text, nil)
	s := d.Stream()
	s.Advance(text[:len(text)-10])
	s.Advance(text[:10]) // shorter: ignored
	if got := s.Finish(text, nil); !slices.Equal(got, want) {
		t.Errorf("finished: %v, want %v", got, want)
	}
	if got := s.Finish(text, nil); !slices.Equal(got, want) {
		t.Errorf("finished again: %v, want %v", got, want)
	}
	s.Stop()
	s = d.Stream()
	s.Advance(text)
	if got := s.Finish(text[:len(text)/2], nil); !slices.Equal(got, d.Scan(text[:len(text)/2], nil)) {
		t.Errorf("finished with a shorter text: %v", got)
	}
	s = d.Stream()
	s.Advance(text)
	s.Stop()
	s.Advance(text)
	if got := s.Finish(text, nil); !slices.Equal(got, want) {
		t.Errorf("finished after Stop: %v, want %v", got, want)
	}
}

// TestStreamAllocatesNothingGrowing: a stream over a clean text of a MiB
// in pieces allocates the stream and nothing else once the pool is warm.
func TestStreamAllocatesNothingGrowing(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector's pools drop what they hold")
	}
	text := corpus.Mixed(1 << 20)
	cuts := evenCuts(64<<10, len(text))
	d := Default()
	var dst []detect.Finding
	n := testing.AllocsPerRun(5, func() {
		s := d.Stream()
		for _, c := range cuts {
			s.Advance(text[:c])
		}
		dst = s.Finish(text, dst[:0])
	})
	if n > 1 || len(dst) != 0 {
		t.Errorf("a stream over a clean MiB allocated %v times, found %v", n, dst)
	}
}

// TestStreamBesideScans: streams and Scans of one detector run at once
// (for the race detector).
func TestStreamBesideScans(t *testing.T) {
	text := plantedText(rand.New(rand.NewPCG(14, 5)), streamReach+20<<10)
	d := streamDetectors(t)[1]
	want := d.Scan(text, nil)
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for range 3 {
				var got []detect.Finding
				if g%2 == 0 {
					got = d.Scan(text, nil)
				} else {
					got = streamFinish(d, text, evenCuts(8<<10, len(text)), false)[1:]
				}
				if !slices.Equal(got, want) {
					t.Errorf("goroutine %d: %d findings, want %d", g, len(got), len(want))
				}
			}
		})
	}
	wg.Wait()
}

// TestStreamReachHoldsTheLongestPEMBlock: a private key block whose label
// is as long as matchPEM reads and whose footer ends as far as its search
// goes is found whole by a stream whose prefilter limit has just passed
// its keyword: streamReach is not short (by more than the keyword's
// length, which the limit's place at its end adds).
func TestStreamReachHoldsTheLongestPEMBlock(t *testing.T) {
	label := strings.Repeat("X", pemLabelMax-len(pemDash)-len(" PRIVATE KEY")) + " PRIVATE KEY"
	header := pemBegin + label + pemDash
	var body strings.Builder
	for body.Len()+65 <= pemMaxBlock-len(pemEnd) {
		body.WriteString(strings.Repeat("A", 63) + "B\n")
	}
	body.WriteString(strings.Repeat("A", pemMaxBlock-len(pemEnd)-body.Len()))
	block := header + body.String() + pemEnd + label + pemDash
	text := block + strings.Repeat(" ", streamReach)
	d := Default()
	if got := d.Scan(text, nil); len(got) != 1 || got[0].Start != 0 || got[0].End != len(block) {
		t.Fatalf("Scan found %v, want the block whole (%d bytes)", got, len(block))
	}
	for c := len("-----BEGIN"); c < len(header); c++ {
		checkStream(t, d, text, nil, []int{streamReach + c}, false)
	}
}
