package secrets

import (
	"fmt"
	"regexp"
	"regexp/syntax"
	"strings"
	"sync"
	"sync/atomic"
	"unicode/utf8"
)

// rule is one provider format. Every rule is tried only where one of its
// keywords occurs, and its pattern is matched starting at that keyword (or
// back bytes before it): the keyword is the pattern's own first literal, so
// a text without the keyword cannot match the rule.
type rule struct {
	kind     string
	family   string
	keywords []string
	// caseSensitive: keywords must occur with this exact case; otherwise
	// they match in any case (names such as DATADOG_API_KEY, AccountKey=).
	caseSensitive bool
	// leftBound: the match must not be preceded by a letter or digit, so
	// that "task-" is not an OpenAI "sk-" and "msg." is not SendGrid's "SG.".
	leftBound bool
	// back: how many bytes before the keyword the match may start (formats
	// whose distinctive literal sits in the middle, e.g. Azure's "Q~").
	back    int
	pattern string
	// check validates the secret (checksum, structure); nil accepts.
	check func(secret string) bool
	// noPlaceholderCheck turns off the placeholder test for formats whose
	// bodies are not random (connection strings check their password).
	noPlaceholderCheck bool
	// match replaces the pattern for formats a regexp handles badly (PEM
	// blocks of several kilobytes, JWTs whose header must decode).
	match func(st *scanState, text string, at int) (start, end int, ok bool)
	// open, for a match that may read past streamReach (openEnded),
	// reports whether its outcome at text[at:] may still change when
	// text grows; openTo, when not 0, is a shorter length of text at which
	// it was open.
	open func(st *scanState, text string, at, openTo int) bool
	// needs, when set, must occur after the scheme's "://" and before the
	// next space, quote, '/', '?' or '#' for the pattern to match: '@' in
	// user:password@host (hasUserinfo). Checking it first spares the
	// regexp on every plain URL.
	needs byte

	// re is the compiled pattern, compiled the first time a keyword of
	// the rule asks for it: most texts wake a handful of the rules, and
	// compiling all of them at once took about 9 MB of allocations and
	// kept 2.6 MB.
	re func() *regexp.Regexp
	// shape is what the pattern's syntax says, read the first time a
	// keyword of the rule is found, for the same reason: parsing every
	// pattern was 540 KB of the 892 a detector's building allocated (a
	// gateway builds it on its first scan, and its resident memory kept
	// most of that), and 3 of its 3.5 ms.
	shape *lazyShape
	// run, for a custom rule (match), is its shape's run (see withRun).
	run *[256]bool
}

// ruleShape is what a rule's pattern says of its matches.
type ruleShape struct {
	// run holds the bytes a token of this rule is made of, for tokens only
	// (nil otherwise). When the rule fails at a keyword, the keywords
	// further inside the same run of these bytes are not tried again: a
	// text of "sk-_sk-_sk-_…" costs one attempt per run, not one per
	// keyword. The price: a token glued to the end of a longer run of its
	// own characters is not found.
	run    *[256]bool
	maxLen int // longest possible match, in bytes: the window after the keyword
	group  int // submatch holding the secret: 1 if the pattern has a group, else 0
}

// tok is a token that begins with one of its keywords, written exactly so.
func tok(kind, family, keywords, pattern string, check ...func(string) bool) rule {
	return rule{kind: kind, family: family, keywords: splitKeywords(keywords), caseSensitive: true,
		leftBound: true, pattern: pattern, check: first(check)}
}

// tokAt is a token whose keyword sits up to back bytes after its start.
func tokAt(kind, family, keywords string, back int, pattern string, check ...func(string) bool) rule {
	r := tok(kind, family, keywords, pattern, check...)
	r.back = back
	return r
}

// ctx is a value without a distinctive prefix, recognised by the name it is
// assigned to: FOO_API_KEY=…, "foo_api_key": "…", foo_api_key: …, fooApiKey := "…".
// A keyword that is only a provider's name must be followed, within the
// name, by a word that says secret (key, token, secret, pass, auth, cred):
// DATADOG_API_KEY is a key, datadog_trace_id is not. Only the value is the
// finding.
func ctx(kind, family, keywords, value string, check ...func(string) bool) rule {
	kws := splitKeywords(keywords)
	var providers, names []string
	for _, k := range kws {
		if secretWord.MatchString(k) {
			names = append(names, regexp.QuoteMeta(k))
		} else {
			providers = append(providers, regexp.QuoteMeta(k))
		}
	}
	var alts []string
	if len(providers) > 0 {
		alts = append(alts, `(?:`+strings.Join(providers, "|")+`)[\w.\-]{0,20}?`+secretWord.String())
	}
	if len(names) > 0 {
		alts = append(alts, strings.Join(names, "|"))
	}
	pattern := `(?i:` + strings.Join(alts, "|") + `)[\w.\-]{0,20}["'\x60\]]{0,2}\s{0,4}(?::=|=>|:|=)\s{0,4}["'\x60]?(` + value + `)`
	return rule{kind: kind, family: family, keywords: kws, pattern: pattern, check: first(check)}
}

// secretWord is what a variable name holding a credential contains.
var secretWord = regexp.MustCompile(`(?:key|token|secret|pass|pwd|auth|cred)`)

// raw is a pattern given in full whose keywords match in any case; its
// first group, if it has one, is the finding.
func raw(kind, family, keywords, pattern string, check ...func(string) bool) rule {
	return rule{kind: kind, family: family, keywords: splitKeywords(keywords), pattern: pattern, check: first(check)}
}

// custom is a format matched by code rather than by a pattern.
func custom(kind, family, keywords string, match func(st *scanState, text string, at int) (int, int, bool)) rule {
	return rule{kind: kind, family: family, keywords: splitKeywords(keywords), caseSensitive: true,
		leftBound: true, match: match}
}

func splitKeywords(s string) []string { return strings.Split(s, "|") }

func first(fs []func(string) bool) func(string) bool {
	if len(fs) == 0 {
		return nil
	}
	return fs[0]
}

// compile prepares the rule when the detector is built; what its pattern
// says waits for the first keyword of the rule found (shape). The built-in
// patterns are tested (TestEveryRuleShapes): one that the checks in
// shapeOf refuse panics there.
func (r *rule) compile() error {
	if r.match != nil {
		r.shape = &lazyShape{ruleShape: ruleShape{run: r.run, maxLen: jwtMaxSegment}}
		r.shape.ready.Store(true)
		return nil
	}
	if r.kind == "url_credentials" || r.kind == "db_connection_string" && strings.Contains(r.pattern, "://") {
		r.needs = '@'
	}
	src := r.pattern
	if r.back == 0 {
		src = `^(?:` + src + `)`
	}
	r.re = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(src) })
	kind, pattern, keywords, back, leftBound := r.kind, r.pattern, r.keywords, r.back, r.leftBound
	r.shape = &lazyShape{read: func() ruleShape {
		shape, err := shapeOf(kind, pattern, keywords, back, leftBound)
		if err != nil {
			panic(err)
		}
		return shape
	}}
	return nil
}

// lazyShape is a rule's shape, read once, on first use. Scan asks for it
// at every keyword it tries: the test of ready is all that costs once it
// is read (a sync.OnceValue's call was a tenth of a flood of keywords
// that fail at once, "https://" repeated).
type lazyShape struct {
	ready atomic.Bool
	once  sync.Once
	read  func() ruleShape
	ruleShape
}

// get returns the shape, reading it the first time.
func (l *lazyShape) get() *ruleShape {
	if !l.ready.Load() {
		l.once.Do(func() {
			l.ruleShape = l.read()
			l.ready.Store(true)
		})
	}
	return &l.ruleShape
}

// shapeOf reads a rule's pattern: the window its matches fit in, its
// group, the bytes of its tokens.
func shapeOf(kind, pattern string, keywords []string, back int, leftBound bool) (ruleShape, error) {
	var shape ruleShape
	parsed, err := syntax.Parse(pattern, syntax.Perl)
	if err != nil {
		return shape, fmt.Errorf("secrets rule %s: %v", kind, err)
	}
	n, bounded := maxMatchLen(parsed)
	if !bounded {
		return shape, fmt.Errorf("secrets rule %s: pattern has an unbounded repetition; give it a maximum so the window after a keyword is bounded", kind)
	}
	shape.maxLen = n + back
	if parsed.MaxCap() > 0 {
		shape.group = 1
	}
	if leftBound {
		shape.run = new([256]bool)
		addTokenBytes(shape.run, parsed)
	}
	if back > 0 {
		// Scan skips keywords not preceded by a token byte: that holds only
		// if a match cannot begin with its keyword.
		for _, k := range keywords {
			if shape.run == nil || strings.HasPrefix(pattern, k) {
				return shape, fmt.Errorf("secrets rule %s: a rule with bytes before its keyword must be a token whose pattern cannot begin with its keyword %q", kind, k)
			}
		}
	}
	return shape, nil
}

// addTokenBytes adds to set the ASCII bytes re can match, leaving out
// spaces and quotes, which end a run whatever the pattern says.
func addTokenBytes(set *[256]bool, re *syntax.Regexp) {
	add := func(lo, hi rune) {
		for c := max(lo, '!'); c <= min(hi, '~'); c++ {
			if c != '"' && c != '\'' && c != '`' {
				set[c] = true
				if re.Flags&syntax.FoldCase != 0 {
					set[lowerASCII(byte(c))] = true
					set[upperASCII(byte(c))] = true
				}
			}
		}
	}
	switch re.Op {
	case syntax.OpLiteral:
		for _, r := range re.Rune {
			add(r, r)
		}
	case syntax.OpCharClass:
		for i := 0; i+1 < len(re.Rune); i += 2 {
			add(re.Rune[i], re.Rune[i+1])
		}
	case syntax.OpAnyChar, syntax.OpAnyCharNotNL:
		add(0, utf8.MaxRune)
	}
	for _, sub := range re.Sub {
		addTokenBytes(set, sub)
	}
}

// runEnd is where the run of set's bytes starting at at ends, looking no
// further than limit.
func runEnd(set *[256]bool, text string, at, limit int) int {
	limit = min(limit, len(text))
	for at < limit && set[text[at]] {
		at++
	}
	return at
}

// maxMatchLen is the longest text, in bytes, that re can match; false if
// re has no bound.
func maxMatchLen(re *syntax.Regexp) (int, bool) {
	switch re.Op {
	case syntax.OpEmptyMatch, syntax.OpBeginLine, syntax.OpEndLine, syntax.OpBeginText,
		syntax.OpEndText, syntax.OpWordBoundary, syntax.OpNoWordBoundary, syntax.OpNoMatch:
		return 0, true
	case syntax.OpLiteral:
		n := 0
		for _, r := range re.Rune {
			n += runeWidth(r, re.Flags&syntax.FoldCase != 0)
		}
		return n, true
	case syntax.OpCharClass:
		top := rune(0)
		for i := 1; i < len(re.Rune); i += 2 {
			top = max(top, re.Rune[i])
		}
		return runeWidth(top, false), true
	case syntax.OpAnyCharNotNL, syntax.OpAnyChar:
		return utf8.UTFMax, true
	case syntax.OpCapture:
		return maxMatchLen(re.Sub[0])
	case syntax.OpConcat:
		total := 0
		for _, sub := range re.Sub {
			n, ok := maxMatchLen(sub)
			if !ok {
				return 0, false
			}
			total += n
		}
		return total, true
	case syntax.OpAlternate:
		longest := 0
		for _, sub := range re.Sub {
			n, ok := maxMatchLen(sub)
			if !ok {
				return 0, false
			}
			longest = max(longest, n)
		}
		return longest, true
	case syntax.OpQuest:
		return maxMatchLen(re.Sub[0])
	case syntax.OpRepeat:
		if re.Max < 0 {
			return 0, false
		}
		n, ok := maxMatchLen(re.Sub[0])
		return n * re.Max, ok
	}
	return 0, false // star, plus
}

func runeWidth(r rune, fold bool) int {
	if fold && r < utf8.RuneSelf {
		// Case folding can reach a multi-byte rune (k matches the Kelvin sign).
		return utf8.UTFMax
	}
	return max(utf8.RuneLen(r), 1)
}

// find tries the rule, of that shape, at a keyword found at
// text[at:at+kwLen]. It returns the secret's span.
func (r *rule) find(st *scanState, shape *ruleShape, text string, at, kwLen int) (start, end int, ok bool) {
	if r.match != nil {
		return r.match(st, text, at)
	}
	if r.needs != 0 && !hasUserinfo(text, at, at+shape.maxLen, r.needs) {
		return 0, 0, false
	}
	lo := max(at-r.back, 0)
	hi := min(at+shape.maxLen, len(text))
	window := text[lo:hi]
	var m []int
	if r.back == 0 {
		m = r.re().FindStringSubmatchIndex(window)
	} else {
		for _, cand := range r.re().FindAllStringSubmatchIndex(window, 4) {
			if cand[0] <= at-lo && cand[1] >= at-lo+kwLen {
				m = cand
				break
			}
		}
	}
	if m == nil || m[2*shape.group] < 0 {
		return 0, 0, false
	}
	matchStart := lo + m[0]
	start, end = lo+m[2*shape.group], lo+m[2*shape.group+1]
	if r.leftBound && matchStart > 0 && isAlnum(text[matchStart-1]) {
		return 0, 0, false
	}
	if end < len(text) && isAlnum(text[end]) {
		return 0, 0, false
	}
	secret := text[start:end]
	if !r.noPlaceholderCheck {
		body := secret
		if start == at {
			body = secret[kwLen:]
		}
		if looksLikePlaceholder(body) {
			return 0, 0, false
		}
	}
	if r.check != nil && !r.check(secret) {
		return 0, 0, false
	}
	return start, end, true
}

// hasUserinfo reports whether text[at:limit], a URL's scheme on, may hold
// a user and password: the scheme's letters, digits and '+' end in "://",
// and c comes after it before any space, quote, '/', '?' or '#' (bytes
// the patterns' user and password do not take). Stopping at the host's
// first '/' reads a few bytes of most URLs, not all of them.
func hasUserinfo(text string, at, limit int, c byte) bool {
	limit = min(limit, len(text))
	i := at
	for i < limit && isSchemeByte(text[i]) {
		i++
	}
	if !strings.HasPrefix(text[i:limit], "://") {
		return false
	}
	for i += 3; i < limit; i++ {
		if b := text[i]; b == c {
			return true
		} else if userinfoStops[b] {
			return false
		}
	}
	return false
}

// userinfoStops are the bytes that end a URL's user and password.
var userinfoStops = [256]bool{' ': true, '\t': true, '\n': true, '\r': true, '\f': true, '"': true, '\'': true, '`': true, '<': true, '>': true, '/': true, '?': true, '#': true}

func isSchemeByte(c byte) bool { return isAlnum(c) || c == '+' }

func isAlnum(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}

const base64URLChars = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"

// withRun gives a custom rule the bytes its tokens are made of (see
// rule.run).
func withRun(r rule, chars string) rule {
	r.run = new([256]bool)
	for i := 0; i < len(chars); i++ {
		r.run[chars[i]] = true
	}
	return r
}

// openEnded gives a custom rule whose match has no bound the test of
// whether text's next bytes may change it (see rule.open).
func openEnded(r rule, open func(st *scanState, text string, at, openTo int) bool) rule {
	r.open = open
	return r
}

// verbatim turns off the placeholder test for a rule whose match is not
// random text (a URL with a host name); its check judges the secret part.
func verbatim(r rule) rule {
	r.noPlaceholderCheck = true
	return r
}
