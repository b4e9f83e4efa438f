package injection

import (
	"cmp"
	"slices"
	"strings"
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
	// quietTriggers is triggers with what quietPhrases needs besides.
	quietTriggers map[string]*triggerEntry
	quietIndex    triggerIndex
	// triggerHint has the bit of triggerHash set for every trigger word:
	// most words are not triggers, and a bit test is cheaper than a map.
	triggerHint [triggerHintBits / 64]uint64
	// maxTrigger is the length of the longest trigger word.
	maxTrigger int
	// pairLen has, for the first two bytes of each trigger word (for a
	// word of one byte, the byte and any other), read as pairIndex reads them,
	// the bit of the word's length; lastLen the same for its last byte
	// (either case): quietPhrases passes over most words ("the", "and",
	// numbers) with two loads, inline.
	pairLen [1 << 10]uint64
	lastLen [256]uint64
	// lastPair is pairLen of each trigger word's last two bytes (for a
	// word of one byte, any byte and it): the quiet walk's blocks test it
	// instead of lastLen, and pass over three words in five more.
	lastPair [1 << 10]uint64
	// maxUnicode is maxUnicodeFindings; tests lower it to reach it with
	// short texts.
	maxUnicode int
	// maxEncoded is maxEncodedFindings, lowered or 0 (no cap) likewise.
	maxEncoded int
	// unfiltered (tests only) tries every start, as if no rule had a
	// prefix filter, and builds the matching form of every text (no
	// quietPhrases).
	unfiltered bool
}

const triggerHintBits = 1 << 14

// triggerHash is a cheap hash of a word: its length and its first, middle
// and last bytes.
func triggerHash(w []byte) uint {
	n := len(w)
	h := uint(n)*0x9E3779B1 ^ uint(w[0])<<16 ^ uint(w[n-1])<<8 ^ uint(w[n/2])*0x85EB
	return (h ^ h>>13) & (triggerHintBits - 1)
}

func (d *Detector) mayTrigger(w []byte) bool {
	h := triggerHash(w)
	return d.triggerHint[h/64]&(1<<(h%64)) != 0
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
	d := &Detector{enabled: enabled, definitions: definitions, maxUnicode: maxUnicodeFindings, maxEncoded: maxEncodedFindings}
	refs := 0
	for _, r := range rules {
		refs += len(r.triggers)
	}
	// The words' rule lists are gathered first and laid out in one array,
	// and the maps made at their size: grown word by word, they were a
	// third of what building a detector allocated.
	opened := make([]triggerRef, 0, refs)
	d.rules = make([]*rule, 0, len(rules))
	for _, r := range rules {
		if r.definitionsOnly && !definitions {
			continue
		}
		d.rules = append(d.rules, r)
		for _, t := range r.triggers {
			if len(t) > maxTriggerLen {
				panic("injection: trigger word " + t + " is longer than maxTriggerLen")
			}
			d.maxTrigger = max(d.maxTrigger, len(t))
			d.pairLen[pairIndex(t[0], t[min(1, len(t)-1)])] |= 1 << len(t)
			if len(t) == 1 {
				// quietPhrases reads the byte after a word of one byte.
				for c1 := range 32 {
					d.pairLen[pairIndex(t[0], byte(c1))] |= 1 << 1
				}
			}
			d.lastLen[t[len(t)-1]] |= 1 << len(t)
			if len(t) == 1 {
				for c0 := range 32 {
					d.lastPair[pairIndex(byte(c0), t[0])] |= 1 << 1
				}
			} else {
				d.lastPair[pairIndex(t[len(t)-2], t[len(t)-1])] |= 1 << len(t)
			}
			if c := t[len(t)-1]; 'a' <= c && c <= 'z' {
				d.lastLen[c-'a'+'A'] |= 1 << len(t)
			}
			opened = append(opened, triggerRef{t, len(d.rules) - 1})
			h := triggerHash([]byte(t))
			d.triggerHint[h/64] |= 1 << (h % 64)
		}
	}
	d.triggers = rulesByTrigger(opened)
	d.quietTriggers = make(map[string]*triggerEntry, len(d.triggers))
	for t, rules := range d.triggers {
		d.quietTriggers[t] = d.newTriggerEntry(rules)
	}
	d.quietIndex = newTriggerIndex(d.quietTriggers)
	return d
}

// triggerRef is a trigger word and a rule it opens (an index of the
// detector's rules).
type triggerRef struct {
	word string
	rule int
}

// rulesByTrigger maps each word of refs to the rules it opens, in the
// order of refs, the lists sharing one array.
func rulesByTrigger(refs []triggerRef) map[string][]int {
	slices.SortStableFunc(refs, func(a, b triggerRef) int { return strings.Compare(a.word, b.word) })
	words := 0
	for i := range refs {
		if i == 0 || refs[i].word != refs[i-1].word {
			words++
		}
	}
	all := make([]int, len(refs))
	byWord := make(map[string][]int, words)
	for i := 0; i < len(refs); {
		j := i
		for ; j < len(refs) && refs[j].word == refs[i].word; j++ {
			all[j] = refs[j].rule
		}
		byWord[refs[i].word] = all[i:j:j]
		i = j
	}
	return byWord
}

// specialToken matches chat-template special tokens: <|im_start|>,
// <|endoftext|>, <|start_header_id|>... (full-width bars are folded).
var specialToken = newLazyRegexp(`^<\| ?[a-z][a-z0-9_.-]{1,40} ?\|>`)

// scanner is the per-call scratch space, pooled.
type scanner struct {
	n       normalizer
	covered []int   // per rule: matching-form offset its last match ended at
	tried   []int   // per rule: the last start tried (each start is tried once)
	matches []match // phrase matches, in matching-form offsets
	out     []rawFinding
	around  []byte // the matching form around a trigger word (quietTrigger)
	// judged counts the matches judged in context in this text, and runs
	// the rules' regexps run; past their budgets, the rest of the text is
	// one phrase_flood.
	judged, judgeBudget int
	runs, runBudget     int
	flooded             bool
	// recapFrom, when not 0, is where the phrase matches start in out,
	// the Unicode findings before them to be recorded again once the
	// encoded ones are known (recapUnicode); 0 for none due.
	recapFrom int
}

// A match is judged in its sentence (framedAsExample, up to 300 bytes
// each side, several regexps): about ten microseconds. A text made of
// nothing but phrases ("<|im_start|>" repeated) would cost that every few
// bytes, seconds for a result of megabytes. So a text gets judgeBase
// judgements and one more per judgeEvery bytes (an essay on prompt
// injection quoting its examples stays well within); past that, what is
// left of it is reported as one phrase_flood finding, unjudged.
//
// The same holds, at a lower price, for running a rule's regexp at a start
// its prefix filter admits (a microsecond or two): "ignore all previous "
// repeated admits one every few words. A text gets runBase runs and one
// more per runEvery bytes.
const (
	judgeBase  = 64
	judgeEvery = 512
	runBase    = 256
	runEvery   = 64
)

// mayJudge counts one judgement of a match starting at b[ms:]. When the
// text has had its share, it records the phrase_flood match from ms to the
// end and returns false.
func (s *scanner) mayJudge(b []byte, ms int) bool {
	if s.judged < s.judgeBudget {
		s.judged++
		return true
	}
	s.flood(b, ms)
	return false
}

// mayRun counts one run of a rule's regexp at b[p:], as mayJudge.
func (s *scanner) mayRun(b []byte, p int) bool {
	if s.runs < s.runBudget {
		s.runs++
		return true
	}
	s.flood(b, p)
	return false
}

func (s *scanner) flood(b []byte, at int) {
	s.matches = append(s.matches, match{KindPhraseFlood, at, len(b)})
	s.flooded = true
}

type match struct {
	kind       string
	start, end int
}

var scanners = sync.Pool{New: func() any { return new(scanner) }}

// maxPooledForm bounds the matching form (and its map) a pooled scanner
// keeps: after a result of many megabytes, a copy of its size must not
// stay in memory for the next small text. Up to it, the form is reused:
// made anew for every text of a megabyte, it cost a tenth more time.
const maxPooledForm = 2 << 20

func putScanner(s *scanner) {
	if cap(s.n.b) > maxPooledForm {
		s.n.b = nil
	}
	if cap(s.n.src) > maxPooledForm/4 {
		s.n.src = nil
	}
	scanners.Put(s)
}

// Scan implements [detect.Detector]: it appends the findings in text to dst,
// ordered by Start and non-overlapping (of two overlapping findings the one
// starting first, or else the longer, is kept).
func (d *Detector) Scan(text string, dst []detect.Finding) []detect.Finding {
	return d.scanOn(text, dst, true)
}

// ScanAlone is Scan on the caller's goroutine only (detect.Alone): a big
// text is not cut into pieces for the other cores. The pieces' findings
// are the whole text's (scanSplit scans whole when it cannot show that),
// so it finds exactly what Scan finds.
func (d *Detector) ScanAlone(text string, dst []detect.Finding) []detect.Finding {
	return d.scanOn(text, dst, false)
}

// scanOn is Scan, its text cut into pieces for all the cores if split.
func (d *Detector) scanOn(text string, dst []detect.Finding, split bool) []detect.Finding {
	s := scanners.Get().(*scanner)
	defer putScanner(s)
	var found []rawFinding
	if split {
		found = d.scanSplit(s, text)
	} else {
		found = d.scan(s, text)
	}
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
	s.out, s.recapFrom = s.out[:0], 0
	var runs letterRun
	if !d.unfiltered && d.quietPhrases(s, text, &runs) {
		for _, f := range s.n.found {
			if d.enabled.has(f.Kind) {
				s.out = append(s.out, f)
			}
		}
	} else {
		s.out = d.scanPhrases(s, text)
	}
	if d.enabled.has(KindEncodedPayload) {
		s.out = d.scanEncoded(text, s.out, &runs)
	}
	return d.recapUnicode(s, text)
}

// scanPhrases appends to s.out the Unicode findings of text and the
// matches of the phrase rules, on its matching form. Where a Unicode kind
// passed its cap among phrase matches, it sets s.recapFrom: the last kept
// of that kind is chosen once the encoded findings are known too.
func (d *Detector) scanPhrases(s *scanner, text string) []rawFinding {
	s.recapFrom = 0
	s.n.resetFound(findingCap{max: d.maxUnicode, hi: len(text)})
	s.n.normalize(text, false, true)
	for _, f := range s.n.found {
		if d.enabled.has(f.Kind) {
			s.out = append(s.out, f)
		}
	}
	if d.matchPhrases(s, s.n.b, false) {
		// Matches are rare: only now map the matching form back to text.
		s.n.normalize(text, true, false)
		unicodeEnd := len(s.out)
		for _, m := range s.matches {
			if !d.enabled.has(m.kind) {
				continue
			}
			start, end := s.n.origSpan(text, m.start, m.end)
			s.out = append(s.out, rawFinding{Kind: m.kind, Start: start, End: end})
		}
		if s.n.tally.overCap(d.maxUnicode) {
			s.recapFrom = unicodeEnd
		}
	}
	return s.out
}

// matchPhrases runs the phrase rules on b, the matching form of a text. It
// records the matches in s.matches and reports whether there was any; with
// anyOnly it stops at the first.
func (d *Detector) matchPhrases(s *scanner, b []byte, anyOnly bool) bool {
	s.matches = s.matches[:0]
	s.judged, s.judgeBudget, s.flooded = 0, judgeBase+len(b)/judgeEvery, false
	s.runs, s.runBudget = 0, runBase+len(b)/runEvery
	// covered and tried are reset at the first trigger word only: most
	// texts (most strings of a message) have none.
	reset := false
	// recent holds the starts of the last words, for rules whose match
	// starts a few words before the trigger.
	var recent [maxBack + 1]int
	words := 0
	for i := 0; i < len(b); {
		if !isWordByte(b[i]) {
			if b[i] == '<' && i+1 < len(b) && b[i+1] == '|' && (anyOnly || d.enabled.has(KindRoleTag)) {
				if d.addSpecialToken(s, b, i) && anyOnly || s.flooded {
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
		recent[words%len(recent)] = i
		words++
		if !d.mayTrigger(b[i:j]) {
			i = j
			continue
		}
		for _, ri := range d.triggers[string(b[i:j])] {
			if !reset {
				s.covered = s.covered[:0]
				s.tried = s.tried[:0]
				for range d.rules {
					s.covered = append(s.covered, -1)
					s.tried = append(s.tried, -1)
				}
				reset = true
			}
			r := d.rules[ri]
			if !anyOnly && !d.enabled.has(r.kind) {
				// Not reported, so not tried: its tries would spend the
				// text's budget (mayRun) on nothing, and flood it.
				continue
			}
			if r.guard != nil && !r.guard(b, i, j) {
				continue
			}
			if d.tryRule(s, ri, b, &recent, words) && anyOnly || s.flooded {
				return true
			}
		}
		i = j
	}
	return len(s.matches) > 0
}

// maxBack is the largest rule.back.
const maxBack = 8

// tryRule tries rule ri at the trigger word (the last of recent) and at the
// starts of the back words before it, earliest first, and records the first
// accepted match.
func (d *Detector) tryRule(s *scanner, ri int, b []byte, recent *[maxBack + 1]int, words int) bool {
	r := d.rules[ri]
	back := r.back
	if back == 0 {
		back = defaultBack
	}
	back = min(back, words-1)
	for k := back; k >= 0; k-- {
		ws := recent[(words-1-k)%len(recent)]
		if r.punct {
			// Punctuation attached before the word: "<system", "### system".
			for p := max(0, ws-8); p < ws; p++ {
				if b[p] != ' ' && b[p] != '\n' && !isWordByte(b[p]) && d.tryAt(s, ri, b, p) {
					return true
				}
			}
		}
		if d.tryAt(s, ri, b, ws) {
			return true
		}
	}
	return false
}

// tryAt runs rule ri anchored at b[p:] and records an accepted match.
func (d *Detector) tryAt(s *scanner, ri int, b []byte, p int) bool {
	if p < s.covered[ri] || p <= s.tried[ri] {
		return false // inside a recorded match, or tried from an earlier trigger
	}
	s.tried[ri] = p
	admitted := d.rules[ri].filter().admits(b[p:])
	if !admitted && !d.unfiltered {
		return false
	}
	r := d.rules[ri]
	maxLen := r.maxLen
	if maxLen == 0 {
		maxLen = defaultMaxLen
	}
	end := min(len(b), p+maxLen)
	for end < len(b) && isWordByte(b[end]) {
		end++
	}
	// Only runs the filter admits count: the unfiltered detector (tests)
	// floods where the filtered one does.
	if admitted && !s.mayRun(b, p) {
		return true
	}
	if end-p < r.minMatch && !d.unfiltered {
		// Counted as a run all the same: floods stay where they were. (The
		// unfiltered detector of the tests runs it: FuzzPrefixFilterKeepsMatches
		// holds this skip to what the regexp finds.)
		return false
	}
	loc := r.re.FindIndex(b[p:end])
	if loc == nil {
		return false
	}
	ms, me := p, p+loc[1]
	if !s.mayJudge(b, ms) {
		return true
	}
	if !d.accept(r, b, ms, me) {
		return false
	}
	if r.extend != nil {
		ms, me = r.extend(b, ms, me)
	}
	s.matches = append(s.matches, match{r.kind, ms, me})
	s.covered[ri] = me
	return true
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

// addSpecialToken records a special token starting at b[i] ("<|").
func (d *Detector) addSpecialToken(s *scanner, b []byte, i int) bool {
	if !s.mayRun(b, i) {
		return true
	}
	loc := specialToken.FindIndex(b[i:min(len(b), i+48)])
	if loc == nil || loc[0] != 0 {
		return false
	}
	ms, me := i, i+loc[1]
	if !s.mayJudge(b, ms) {
		return true
	}
	if framedAsExample(b, ms, me) {
		return false
	}
	s.matches = append(s.matches, match{KindRoleTag, ms, me})
	return true
}
