package secrets

import (
	"fmt"
	"slices"
	"sync"

	"github.com/mcpgate/mcpgate/internal/detect"
)

// Options configure a detector. The zero value is the default: every rule,
// no generic high-entropy detection.
type Options struct {
	// HighEntropy adds KindHighEntropy: random-looking strings no rule
	// names. It is a heuristic, meant for audit (KindInfo.AuditOnly); it
	// also costs a pass over every byte of every text. Zero: off.
	HighEntropy bool
	// Kinds, when not empty, keeps only the rules of these kinds (names
	// from Kinds). Empty: every kind. KindHighEntropy listed here has no
	// effect unless HighEntropy is set.
	Kinds []string
}

// KindInfo describes one kind of finding.
type KindInfo struct {
	Name        string   // stable name, as in [REDACTED:<name>]
	Description string   // one line, for documentation
	Families    []string // provider families whose formats it covers
	// AuditOnly marks heuristic kinds: a policy should record them, not
	// redact or block on them, unless configured to.
	AuditOnly bool
}

// Kinds lists every kind the package can report, in a stable order.
func Kinds() []KindInfo {
	families := map[string][]string{}
	for _, r := range rules {
		if !slices.Contains(families[r.kind], r.family) {
			families[r.kind] = append(families[r.kind], r.family)
		}
	}
	out := make([]KindInfo, len(kindDescriptions))
	for i, k := range kindDescriptions {
		k.Families = families[k.Name]
		out[i] = k
	}
	return out
}

// Detector finds provider secrets in text. It is safe for concurrent use.
type Detector struct {
	rules       []rule
	pre         *prefilter
	highEntropy bool
	scratch     sync.Pool // *scanState
	// longestKeyword is the length of the longest keyword: a stream
	// resumes the prefilter that far before where it stopped.
	longestKeyword int
}

var _ detect.Streamer = (*Detector)(nil)

// New builds a detector; each pattern is read and compiled once, the
// first time a keyword of its rule is found.
func New(opts Options) (*Detector, error) {
	selected := rules
	if len(opts.Kinds) > 0 {
		known := map[string]bool{}
		for _, k := range kindDescriptions {
			known[k.Name] = true
		}
		want := map[string]bool{}
		for _, k := range opts.Kinds {
			if !known[k] {
				return nil, fmt.Errorf("secrets: unknown kind %q (see secrets.Kinds for the names)", k)
			}
			want[k] = true
		}
		selected = nil
		for _, r := range rules {
			if want[r.kind] {
				selected = append(selected, r)
			}
		}
	}
	return newDetector(selected, opts.HighEntropy)
}

func newDetector(rs []rule, highEntropy bool) (*Detector, error) {
	d := &Detector{rules: slices.Clone(rs), highEntropy: highEntropy}
	var keywords []keyword
	for i := range d.rules {
		r := &d.rules[i]
		if err := r.compile(); err != nil {
			return nil, err
		}
		for _, k := range r.keywords {
			keywords = append(keywords, keyword{text: k, caseSensitive: r.caseSensitive, rule: int32(i)})
			d.longestKeyword = max(d.longestKeyword, len(k))
		}
	}
	d.pre = newPrefilter(keywords)
	d.scratch.New = func() any { return &scanState{until: make([]int, len(d.rules))} }
	return d, nil
}

var defaultDetector = sync.OnceValue(func() *Detector {
	d, err := New(Options{})
	if err != nil {
		panic(err) // the built-in table is tested
	}
	return d
})

// Default returns the shared detector built with zero Options.
func Default() *Detector { return defaultDetector() }

// candidate is one rule's match before overlaps are resolved; rule is -1
// for the high-entropy heuristic.
type candidate struct {
	start, end int
	rule       int
}

// scanState is the scratch of one Scan, pooled so that a Scan allocates
// nothing once warm.
type scanState struct {
	cands []candidate
	// until[r]: rule r already matched, or failed on a whole run of its
	// token bytes, up to here; its keywords found before are not tried.
	until []int
	// The last search for a PEM footer: from where, up to where, and the
	// footer it found (-1: none). footerLimit 0: no search yet.
	footerFrom, footerLimit, footerAt int
	// The last searches for a PuTTY file's MAC line and Private-Lines.
	puttyMAC, puttyLines searchMemo
}

func (st *scanState) reset() {
	clear(st.until)
	st.cands = st.cands[:0]
	st.footerFrom, st.footerLimit, st.footerAt = 0, 0, -1
	st.puttyMAC, st.puttyLines = searchMemo{}, searchMemo{}
}

// Scan appends the secrets found in text to dst, in order, without overlaps.
func (d *Detector) Scan(text string, dst []detect.Finding) []detect.Finding {
	var st *scanState
	d.pre.scan(text, func(h hit) {
		if !d.wakes(text, h) {
			return
		}
		if st == nil {
			st = d.scratch.Get().(*scanState)
			st.reset()
		}
		d.try(st, text, h)
	})
	if d.highEntropy {
		if st == nil {
			st = d.scratch.Get().(*scanState)
			st.reset()
		}
		st.cands = appendHighEntropy(text, st.cands)
	}
	if st == nil {
		return dst
	}
	dst = d.resolve(st.cands, dst)
	d.scratch.Put(st)
	return dst
}

// wakes reports whether keyword hit h in text may begin a match of its
// rule, by the bytes before it alone: no scan state, no regexp.
func (d *Detector) wakes(text string, h hit) bool {
	r := &d.rules[d.pre.keywords[h.keyword].rule]
	if r.leftBound && r.back == 0 && h.start > 0 && isAlnum(text[h.start-1]) {
		return false
	}
	// Every match of a rule with bytes before its keyword has bytes of its
	// own there (shapeOf checks the pattern does not start with it), so
	// the keyword occurrence it contains is preceded by a token byte:
	// "en-us" is no Mailchimp key, and no regexp runs.
	return r.back == 0 || h.start > 0 && r.shape.get().run[text[h.start-1]]
}

// try runs the rule of keyword hit h at it, in text, unless an earlier
// attempt of the rule covered it; a match goes into st.cands. Hits must
// come in the order the prefilter reports them (st.until).
func (d *Detector) try(st *scanState, text string, h hit) {
	k := &d.pre.keywords[h.keyword]
	r := &d.rules[k.rule]
	if h.start < st.until[k.rule] {
		return
	}
	shape := r.shape.get()
	start, end, ok := r.find(st, shape, text, h.start, len(k.text))
	if !ok {
		if shape.run != nil {
			st.until[k.rule] = runEnd(shape.run, text, h.start, h.start+shape.maxLen)
		}
		return
	}
	st.until[k.rule] = end
	st.cands = append(st.cands, candidate{start: start, end: end, rule: int(k.rule)})
}

// resolve turns candidates into ordered, non-overlapping findings.
// Overlapping candidates merge into one finding covering them all, so that
// redacting it leaves no part of any secret behind; it takes the kind of a
// rule over the heuristic, then of the longest candidate, then of the rule
// listed first.
func (d *Detector) resolve(cands []candidate, dst []detect.Finding) []detect.Finding {
	if len(cands) == 0 {
		return dst
	}
	byStart := func(a, b candidate) int { return a.start - b.start }
	if !slices.IsSortedFunc(cands, byStart) {
		slices.SortFunc(cands, byStart)
	}
	cur, best := cands[0], cands[0]
	emit := func() {
		dst = append(dst, detect.Finding{Kind: d.kindOf(best), Start: cur.start, End: cur.end})
	}
	for _, c := range cands[1:] {
		if c.start >= cur.end {
			emit()
			cur, best = c, c
			continue
		}
		cur.end = max(cur.end, c.end)
		if better(c, best) {
			best = c
		}
	}
	emit()
	return dst
}

func better(a, b candidate) bool {
	if (a.rule < 0) != (b.rule < 0) {
		return b.rule < 0
	}
	if la, lb := a.end-a.start, b.end-b.start; la != lb {
		return la > lb
	}
	return a.rule < b.rule
}

func (d *Detector) kindOf(c candidate) string {
	if c.rule < 0 {
		return KindHighEntropy
	}
	return d.rules[c.rule].kind
}
