package injection

import (
	"cmp"
	"regexp"
	"slices"
	"sync"

	"github.com/mcpgate/mcpgate/internal/detect"
)

// rawFinding is a finding before overlaps are settled.
type rawFinding = detect.Finding

// Detector finds prompt injection in text: tool results, prompt messages,
// resource text. It implements [detect.Detector]; it is safe for concurrent
// use and compiles nothing per call.
type Detector struct {
	enabled     kindSet
	definitions bool
	rules       []*rule
	// triggers maps a word of the matching form to the rules it opens a
	// window for (indexes into rules).
	triggers map[string][]int
}

var _ detect.Detector = (*Detector)(nil)

// New returns a text detector reporting the kinds of [Kinds] that are not
// definitions-only, minus opts.Disable.
func New(opts Options) (*Detector, error) {
	enabled, err := enabledKinds(opts)
	if err != nil {
		return nil, err
	}
	return newDetector(enabled, false), nil
}

var defaultDetector = sync.OnceValue(func() *Detector {
	d, err := New(Options{})
	if err != nil {
		panic(err) // the zero Options are valid
	}
	return d
})

// Default returns the detector with the zero Options, built once.
func Default() *Detector { return defaultDetector() }

func newDetector(enabled kindSet, definitions bool) *Detector {
	d := &Detector{enabled: enabled, definitions: definitions, triggers: map[string][]int{}}
	for _, r := range rules {
		if r.definitionsOnly && !definitions {
			continue
		}
		d.rules = append(d.rules, r)
		for _, t := range r.triggers {
			d.triggers[t] = append(d.triggers[t], len(d.rules)-1)
		}
	}
	return d
}

// specialToken matches chat-template special tokens: <|im_start|>,
// <|endoftext|>, <|start_header_id|>... (full-width bars are folded).
var specialToken = regexp.MustCompile(`<\| ?[a-z][a-z0-9_.-]{1,40} ?\|>`)

// scanner is the per-call scratch space, pooled.
type scanner struct {
	n       normalizer
	windows [][]window // per rule of the detector, indexed like Detector.rules
	touched []int      // rules with windows in this call
	matches []match    // phrase matches, in matching-form offsets
	out     []rawFinding
}

type window struct{ start, end int }

type match struct {
	kind       string
	start, end int
}

var scanners = sync.Pool{New: func() any { return new(scanner) }}

// Scan implements [detect.Detector]: it appends the findings in text to dst,
// ordered by Start and non-overlapping (of two overlapping findings the one
// starting first, or else the longer, is kept).
func (d *Detector) Scan(text string, dst []detect.Finding) []detect.Finding {
	s := scanners.Get().(*scanner)
	defer scanners.Put(s)
	found := d.scan(s, text)
	slices.SortFunc(found, func(a, b rawFinding) int {
		if c := cmp.Compare(a.Start, b.Start); c != 0 {
			return c
		}
		return cmp.Compare(b.End, a.End)
	})
	end := 0
	for _, f := range found {
		if f.Start < end {
			continue
		}
		dst = append(dst, f)
		end = f.End
	}
	return dst
}

// scan returns every finding of text, overlapping ones included, in s.out.
func (d *Detector) scan(s *scanner, text string) []rawFinding {
	s.out = s.out[:0]
	s.n.found = s.n.found[:0]
	s.n.normalize(text, false, true)
	for _, f := range s.n.found {
		if d.enabled.has(f.Kind) {
			s.out = append(s.out, f)
		}
	}
	if d.matchPhrases(s, s.n.b, false) {
		// Matches are rare: only now map the matching form back to text.
		s.n.normalize(text, true, false)
		for _, m := range s.matches {
			if !d.enabled.has(m.kind) {
				continue
			}
			start, end := s.n.origSpan(text, m.start, m.end)
			s.out = append(s.out, rawFinding{Kind: m.kind, Start: start, End: end})
		}
	}
	if d.enabled.has(KindEncodedPayload) {
		s.out = d.scanEncoded(text, s.out)
	}
	return s.out
}

// matchPhrases runs the phrase rules on b, the matching form of a text. It
// records the matches in s.matches and reports whether there was any; with
// anyOnly it stops at the first.
func (d *Detector) matchPhrases(s *scanner, b []byte, anyOnly bool) bool {
	s.matches = s.matches[:0]
	if len(s.windows) < len(d.rules) {
		s.windows = make([][]window, len(d.rules))
	}
	for _, r := range s.touched {
		s.windows[r] = s.windows[r][:0]
	}
	s.touched = s.touched[:0]

	// One pass over the words: each trigger word opens a window for its rules.
	for i := 0; i < len(b); {
		if !isWordByte(b[i]) {
			if b[i] == '<' && i+1 < len(b) && b[i+1] == '|' {
				if d.addSpecialTokens(s, b, i, anyOnly) && anyOnly {
					return true
				}
			}
			i++
			continue
		}
		j := i + 1
		for j < len(b) && isWordByte(b[j]) {
			j++
		}
		for _, ri := range d.triggers[string(b[i:j])] {
			r := d.rules[ri]
			if r.guard != nil && !r.guard(b, i, j) {
				continue
			}
			s.addWindow(ri, b, i, j)
		}
		i = j
	}

	for _, ri := range s.touched {
		r := d.rules[ri]
		for _, w := range s.windows[ri] {
			for pos := w.start; pos < w.end; {
				loc := r.re.FindIndex(b[pos:w.end])
				if loc == nil {
					break
				}
				ms, me := pos+loc[0], pos+loc[1]
				pos = max(me, ms+1)
				if !d.accept(r, b, ms, me) {
					continue
				}
				if r.extend != nil {
					ms, me = r.extend(b, ms, me)
				}
				s.matches = append(s.matches, match{r.kind, ms, me})
				if anyOnly {
					return true
				}
			}
		}
	}
	return len(s.matches) > 0
}

// accept applies a rule's context tests to a match at b[ms:me].
func (d *Detector) accept(r *rule, b []byte, ms, me int) bool {
	if r.check != nil && !r.check(b, ms, me) {
		return false
	}
	if r.imperative && !imperativeAt(b, ms) {
		return false
	}
	return !framedAsExample(b, ms, me)
}

// addWindow opens (or extends) the window of rule ri around the trigger
// word b[ws:we]. Windows start and end on word boundaries, so \b in a rule
// means in a window what it means in the whole text.
func (s *scanner) addWindow(ri int, b []byte, ws, we int) {
	const before, after = 100, 260
	start, end := max(0, ws-before), min(len(b), we+after)
	for start > 0 && isWordByte(b[start-1]) {
		start--
	}
	for end < len(b) && isWordByte(b[end]) {
		end++
	}
	ws_ := s.windows[ri]
	if len(ws_) == 0 {
		s.touched = append(s.touched, ri)
	} else if last := &ws_[len(ws_)-1]; start <= last.end {
		last.end = max(last.end, end)
		return
	}
	s.windows[ri] = append(ws_, window{start, end})
}

// addSpecialTokens records a special token starting at b[i] ("<|").
func (d *Detector) addSpecialTokens(s *scanner, b []byte, i int, anyOnly bool) bool {
	loc := specialToken.FindIndex(b[i:min(len(b), i+48)])
	if loc == nil || loc[0] != 0 {
		return false
	}
	ms, me := i, i+loc[1]
	if framedAsExample(b, ms, me) {
		return false
	}
	s.matches = append(s.matches, match{KindRoleTag, ms, me})
	return true
}
