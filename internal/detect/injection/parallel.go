package injection

import (
	"runtime"
	"sync"
	"sync/atomic"
	"unicode/utf8"
)

// One big text (a tool result of megabytes) is scanned on all the cores:
// almost all such text is quiet (quietPhrases shows that no phrase rule
// matches it), and quietness is a property of each place in the text that
// depends only on a bounded neighbourhood. So scanInPieces cuts the text at
// cuts (isCut) into pieces, and shows each piece quiet on its own, in a
// piece of text reaching far enough around it (pieceContext) that every
// word of the piece is tried there exactly as in the whole text. The walk
// of that text then reports the Unicode findings and encoded payloads of
// the piece as the whole text's walk would: both are made of the forms and
// tokens between cuts.
//
// It is speculation, not a different scan: any piece that is not shown
// quiet (a rule may match, "<|"), or counts that may reach the whole text's
// budget of rule runs, and the text is scanned whole, as before. A text
// with an injection in it then costs its parallel walk (on the cores that
// were idle) on top of the whole scan; a quiet one the walk alone, split.

const (
	// piecesMin is the text size from which Scan splits: below it, the
	// goroutines and their wait cost more than they save.
	piecesMin = 256 << 10
	// pieceMin is the smallest piece, and piecesPerCore how many pieces
	// each core gets at most: more pieces than cores let a core that
	// is done (or was busy with another detector) take the next piece.
	pieceMin      = 64 << 10
	piecesPerCore = 4
)

// contextBefore and contextAfter bound what the rules read around a word
// of a piece, in bytes of the matching form made from ASCII that is not
// white space (one byte each; other characters may make none):
// guardBefore bytes before the earliest start a rule tries (maxBack words
// before its trigger), with the punctuation before a start; and after the
// trigger, the longest rule.maxLen (360) and what the guards and prefix
// filters read, with room to spare. contextBytes more of text either side
// cover the neighbours a character is classified with (rtlNear: 64).
const (
	contextBefore = 2 * guardBefore
	contextAfter  = 1024
	contextBytes  = 128
	// maxContext bounds the search for a piece's context: a text of long
	// runs without white space is scanned whole.
	maxContext = maxWindow
)

// piece is the part text[lo:hi] of a text, scanned in text[from:to].
type piece struct {
	lo, hi, from, to int
	found            []rawFinding // in the whole text's offsets
	runs             int          // the rule runs its walk counted
}

// pieceCount is how many pieces Scan cuts text into: 1 (no split) for a
// small text or one core.
func pieceCount(textLen int) int {
	if textLen < piecesMin {
		return 1
	}
	return min(textLen/pieceMin, piecesPerCore*runtime.GOMAXPROCS(0))
}

// scanSplit is scan for Scan: it scans a big text in pieces on all the
// cores when it can show the result is the same, and whole otherwise.
func (d *Detector) scanSplit(s *scanner, text string) []rawFinding {
	if n := pieceCount(len(text)); n > 1 && runtime.GOMAXPROCS(0) > 1 && !d.unfiltered {
		if found, ok := d.scanInPieces(s, text, n, pieceMin, runtime.GOMAXPROCS(0)); ok {
			return found
		}
	}
	return d.scan(s, text)
}

// scanInPieces scans text in up to n pieces of at least about minPiece
// bytes on up to workers goroutines (the caller's one of them) and returns
// every finding in s.out; false when it cannot show that scanning text
// whole gives the same findings.
func (d *Detector) scanInPieces(s *scanner, text string, n, minPiece, workers int) ([]rawFinding, bool) {
	pieces := splitText(text, n, minPiece)
	if len(pieces) < 2 {
		return nil, false
	}
	var next atomic.Int64
	var failed atomic.Bool
	var panicked atomic.Pointer[any]
	work := func() {
		defer func() {
			// A bug in a piece's walk is the caller's panic, where a request
			// recovers it, not the whole process's.
			if r := recover(); r != nil {
				panicked.Store(&r)
				failed.Store(true)
			}
		}()
		ps := scanners.Get().(*scanner)
		defer putScanner(ps)
		for !failed.Load() {
			k := int(next.Add(1) - 1)
			if k >= len(pieces) {
				return
			}
			if !d.scanPiece(ps, text, &pieces[k]) {
				failed.Store(true)
			}
		}
	}
	var wg sync.WaitGroup
	for range min(workers, len(pieces)) - 1 {
		wg.Go(work)
	}
	work()
	wg.Wait()
	if r := panicked.Load(); r != nil {
		panic(*r)
	}
	if failed.Load() {
		return nil, false
	}
	runs := 0
	for _, p := range pieces {
		runs += p.runs
	}
	if !withinRunBudget(text, runs) {
		return nil, false
	}
	s.out = s.out[:0]
	for _, p := range pieces {
		s.out = append(s.out, p.found...)
	}
	s.out = capEncoded(capUnicode(s.out, d.maxUnicode), d.maxEncoded)
	return s.out, true
}

// scanPiece walks text[p.from:p.to] with the quiet walk, and keeps what
// it finds in text[p.lo:p.hi].
func (d *Detector) scanPiece(s *scanner, text string, p *piece) bool {
	sub := text[p.from:p.to]
	lo, hi := p.lo-p.from, p.hi-p.from
	var runs letterRun
	if !d.quietPhrasesCapped(s, sub, &runs, findingCap{max: d.maxUnicode, lo: lo, hi: hi}) {
		return false
	}
	p.runs = s.runs
	var found []rawFinding
	for _, f := range s.n.found {
		if d.enabled.has(f.Kind) {
			found = append(found, f)
		}
	}
	if d.enabled.has(KindEncodedPayload) {
		found = d.scanEncodedCapped(sub, found, &runs, encodedCap{max: d.maxEncoded, lo: lo, hi: hi})
	}
	for _, f := range found {
		if lo <= f.Start && f.Start < hi {
			f.Start += p.from
			f.End += p.from
			p.found = append(p.found, f)
		}
	}
	return true
}

// withinRunBudget reports whether runs rule runs are within the budget
// the whole scan of text has (runBase, and one per runEvery bytes of its
// matching form): each ASCII word byte of text is one byte of the form, so
// it counts them, as far as needed. The pieces' walks count every run the
// whole scan makes (and some twice, in their contexts): within it, the
// whole scan floods nowhere either.
func withinRunBudget(text string, runs int) bool {
	need := (runs - runBase) * runEvery
	for i := 0; need > 0 && i < len(text); i++ {
		if asciiWordBytes[text[i]] {
			need--
		}
	}
	return need <= 0
}

// splitText cuts text at cuts near n-1 evenly spaced places, and gives
// each piece its context; it skips a place that would leave a piece
// shorter than half minPiece, and gives up (nil) at a place with no cut,
// or no context, near it.
func splitText(text string, n, minPiece int) []piece {
	var pieces []piece
	lo := 0
	for k := 1; k <= n; k++ {
		hi := len(text)
		if k < n {
			hi = cutAfter(text, len(text)/n*k)
			if hi < 0 {
				return nil // most likely a blob: its walk is fast
			}
			if hi-lo < minPiece/2 || len(text)-hi < minPiece/2 {
				continue
			}
		}
		from, to := contextStart(text, lo), contextEnd(text, hi)
		if from < 0 || to < 0 {
			return nil
		}
		pieces = append(pieces, piece{lo: lo, hi: hi, from: from, to: to})
		lo = hi
	}
	return pieces
}

// contextStart returns a cut at or before c, the start of a piece, with
// enough text between them for the rules tried at the piece's words:
// maxBack+1 words (each run of text between white space that holds an
// ASCII word byte makes at least one word of the form), then contextBefore
// bytes of the form and contextBytes of text. -1 when there is none within
// maxContext.
func contextStart(text string, c int) int {
	if c == 0 {
		return 0
	}
	i, words := c, 0
	for words <= maxBack {
		for i > 0 && isASCIISpace(text[i-1]) {
			i--
		}
		word := false
		for i > 0 && !isASCIISpace(text[i-1]) {
			i--
			word = word || asciiWordBytes[text[i]]
		}
		if i == 0 {
			return 0
		}
		if word {
			words++
		}
		if c-i > maxContext {
			return -1
		}
	}
	for form := 0; i > 0 && (form < contextBefore || c-i < contextBytes); i-- {
		if b := text[i-1]; b < utf8.RuneSelf && !isASCIISpace(b) {
			form++
		}
		if c-i > maxContext {
			return -1
		}
	}
	return cutBefore(text, i)
}

// contextEnd returns a cut at or after c, the end of a piece, with
// contextAfter bytes of the form and contextBytes of text between them.
// -1 when there is none within maxContext.
func contextEnd(text string, c int) int {
	i := c
	for form := 0; i < len(text) && (form < contextAfter || i-c < contextBytes); i++ {
		if b := text[i]; b < utf8.RuneSelf && !isASCIISpace(b) {
			form++
		}
		if i-c > maxContext {
			return -1
		}
	}
	return cutAfter(text, i)
}
