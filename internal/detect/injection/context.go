package injection

import (
	"bytes"
	"slices"
	"strings"
)

// The helpers below look at the matching form around a match to decide what
// a regexp cannot: whether a phrase is issued or only talked about.

func isWordByte(c byte) bool { return wordBytes[c] }

var wordBytes = func() (t [256]bool) {
	for c := range t {
		t[c] = 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '_' || c >= 0x80
	}
	return t
}()

// prevWord returns the word ending before position i (skipping spaces) and
// its start, or "" when punctuation or the text start comes first.
func prevWord(b []byte, i int) (string, int) {
	j := i
	for j > 0 && (b[j-1] == ' ' || b[j-1] == '\n') {
		j--
	}
	k := j
	for k > 0 && (isWordByte(b[k-1]) || b[k-1] == '\'') {
		k--
	}
	return string(b[k:j]), k
}

// clauseStartBefore reports whether only spaces separate position i from
// the start of the text or from clause punctuation.
func clauseStartBefore(b []byte, i int) bool {
	j := i
	for j > 0 && (b[j-1] == ' ' || b[j-1] == '\n') {
		j--
	}
	if j == 0 {
		return true
	}
	switch b[j-1] {
	case '.', '!', '?', ';', ':', ',', '\n', '"', '\'', '`', '(', '[', '>', '*', '-', '#', '|':
		return true
	}
	return bytes.HasSuffix(b[:j], []byte("•"))
}

// Words after which a verb is still an order: "please ignore", "you must
// ignore", "now ignore", "I want you to ignore".
var imperativeLeads = map[string]bool{
	"please": true, "now": true, "then": true, "and": true, "so": true, "also": true, "first": true,
	"just": true, "simply": true, "kindly": true, "immediately": true, "always": true, "must": true,
	"should": true, "shall": true, "will": true, "hereby": true, "pls": true, "next": true,
	"finally": true, "instead": true, "but": true, "or": true, "actually": true, "really": true,
	"you": true, "yourself": true, "henceforth": true, "again": true, "to": true, "completely": true,
	"entirely": true, "fully": true, "totally": true, "silently": true, "quietly": true, "secretly": true,
	"thus": true, "therefore": true, "important": true, "need": true, "needs": true, "afterwards": true,
}

// Words that turn "to <verb>" into a description of someone else's attempt:
// "tries to ignore", "how to bypass".
var attemptWords = map[string]bool{
	"try": true, "tries": true, "tried": true, "trying": true, "attempt": true, "attempts": true,
	"attempted": true, "attempting": true, "how": true, "designed": true, "used": true, "able": true,
	"unable": true, "likely": true, "unlikely": true, "aim": true, "aims": true, "seek": true,
	"seeks": true, "meant": true, "intended": true, "way": true, "ways": true, "trick": true,
	"tricks": true, "tricked": true, "convince": true, "convinces": true, "manipulate": true,
	"manipulates": true, "cause": true, "causes": true, "make": true, "makes": true, "forced": true,
}

var negationWords = map[string]bool{
	"not": true, "never": true, "don't": true, "dont": true, "doesn't": true, "didn't": true,
	"won't": true, "shouldn't": true, "mustn't": true, "cannot": true, "can't": true, "without": true,
	"no": true, "nor": true, "wouldn't": true, "couldn't": true, "t": true,
}

// imperativeAt reports whether the verb at position s reads as an order:
// at a clause start or after a word that leads into an order, and not
// negated ("never ignore the previous instructions" is a safeguard).
func imperativeAt(b []byte, s int) bool {
	w, ws := prevWord(b, s)
	if w == "" {
		return clauseStartBefore(b, s)
	}
	if negationWords[w] {
		return false
	}
	if w2, _ := prevWord(b, ws); negationWords[w2] {
		return false
	}
	if w == "to" {
		w2, _ := prevWord(b, ws)
		return !attemptWords[w2]
	}
	return imperativeLeads[w]
}

// sentenceBounds returns the sentence holding b[s:e]: it ends at ".!?"
// followed by a space, or a line break. "e.g." and "i.e." do not end one.
// It looks no further than maxSentence bytes either side: a text with no
// sentence end must not make each match cost the whole text.
func sentenceBounds(b []byte, s, e int) (int, int) {
	const maxSentence = 300
	start, lo := s, max(0, s-maxSentence)
	for start > lo && !sentenceEndsAt(b, start-1) {
		start--
	}
	end, hi := e, min(len(b), e+maxSentence)
	for end < hi && !sentenceEndsAt(b, end) {
		end++
	}
	return start, end
}

func sentenceEndsAt(b []byte, i int) bool {
	switch b[i] {
	case '\n':
		return true
	case '.', '!', '?':
		if i+1 < len(b) && b[i+1] != ' ' && b[i+1] != '\n' {
			return false
		}
		if b[i] == '.' {
			w, _ := prevWord(b, i)
			switch w {
			case "e", "g", "i", "eg", "ie", "etc", "vs", "cf", "no":
				return false
			}
		}
		return true
	}
	return false
}

var (
	// describing cues: the sentence talks about attacks, detection or test
	// material rather than giving orders.
	describingCue = newLazyRegexp(`\b(?:detect|flag|scan|block|catch|identif|classif|recogni[sz]|analy[sz]|filter|screen|guard|protect|defend|prevent|sanitiz|neutraliz|strip|remov|red[- ]team|label|scor|evaluat|inspect|audit|monitor|warn|mitigat|quot|explain|document|describ|look(?:s|ing)? for|search(?:es|ing)? for|attack|injection|jailbreak|phish|malicious|adversar|exploit|payload|threat|poison|mock|fixture|expected output|canned|illustrat|corpus|token|tag|marker|string|phrase|pattern|keyword|signature|special|risk)`)
	// example cues: what follows is an instance being shown.
	exampleCue = newLazyRegexp(`\b(?:such as|e\.g\.?|eg\.|i\.e\.?|for example|for instance|like|including|includes|include)\b`)
	// label cues: "Sample response: <match>" presents the match as output.
	labelCue = newLazyRegexp(`\b(?:sample|example|mock|expected|typical|canned|dummy|fake|simulated|illustrative|hypothetical|test)\s(?:response|output|reply|answer|result|input|prompt|text|message|payload|string|attack|injection|title)s?\s?:\s?["']?$`)
)

// framedAsExample reports whether the phrase at b[s:e] is quoted or given as
// an example in a sentence about attacks or detection ("Scans for phrases
// such as 'ignore previous instructions'"), or follows an example label
// ("Expected output: ..."). Such a phrase is not reported: it is what
// security tools and articles legitimately say. The cue must come before
// the end of the phrase, so an order cannot excuse itself afterwards.
func framedAsExample(b []byte, s, e int) bool {
	ss, _ := sentenceBounds(b, s, e)
	before := b[ss:s]
	// Cheap tests first: this runs on every match, and a text full of
	// injections is a text full of matches.
	if bytes.IndexByte(before, ':') >= 0 && labelCue.Match(before) {
		return true
	}
	if inReportingClause(before) {
		return true
	}
	if !insideQuotes(before) && !exampleCue.Match(b[ss:e]) {
		return false
	}
	return describingCue.Match(b[ss:min(len(b), e+40)])
}

// insideQuotes reports whether the text before a match leaves a quotation
// open. An apostrophe between two letters (user's, don't) is not a quote.
func insideQuotes(before []byte) bool {
	open := false
	for i, c := range before {
		switch c {
		case '"', '`':
			open = !open
		case '\'':
			letterBefore := i > 0 && isWordByte(before[i-1])
			letterAfter := i+1 < len(before) && isWordByte(before[i+1])
			if !(letterBefore && letterAfter) {
				open = !open
			}
		}
	}
	return open
}

// ---- guards: cheap tests on a trigger word before a window is opened ----

// afterAngle: the trigger word is a tag name ("<system", "</important").
func afterAngle(b []byte, ws, we int) bool {
	if ws > 0 && b[ws-1] == '<' {
		return true
	}
	// "<system-prompt": the second part of a hyphenated tag name.
	return ws > 1 && b[ws-1] == '-' && bytes.LastIndexByte(b[max(0, ws-16):ws], '<') >= 0
}

// afterHash: the trigger word follows '#' on its line ("### System:").
func afterHash(b []byte, ws, we int) bool {
	for i := ws - 1; i >= 0 && i >= ws-10; i-- {
		switch b[i] {
		case '#':
			return true
		case ' ':
		default:
			if !isWordByte(b[i]) {
				return false
			}
		}
	}
	return false
}

// beforeColon: a ':' follows the trigger word within a few words.
func beforeColon(b []byte, ws, we int) bool {
	return bytes.IndexByte(b[we:min(len(b), we+24)], ':') >= 0
}

// afterBracket: the trigger word opens a bracketed label ("[system", "(admin").
func afterBracket(b []byte, ws, we int) bool {
	i := ws - 1
	if i >= 0 && b[i] == ' ' {
		i--
	}
	return i >= 0 && (b[i] == '[' || b[i] == '(')
}

// ---- checks: decisions on a match ----

// atLineStart: only spaces separate the match from the start of its line.
func atLineStart(b []byte, s, e int) bool {
	i := s
	for i > 0 && b[i-1] == ' ' {
		i--
	}
	return i == 0 || b[i-1] == '\n' || b[i-1] == '"' || b[i-1] == '>'
}

// atClauseStart: the match starts a clause ("AI: ignore ...", "... . Assistant, forget ...").
func atClauseStart(b []byte, s, e int) bool {
	return clauseStartBefore(b, s)
}

// humanRoles are nouns that make "an AI ..." a person: "if you are an AI
// researcher".
var humanRoles = []string{
	"researcher", "researchers", "enthusiast", "enthusiasts", "engineer", "engineers", "developer",
	"developers", "team", "company", "startup", "student", "students", "fan", "fans", "user",
	"users", "practitioner", "practitioners", "expert", "experts", "specialist", "professional",
	"vendor", "provider", "ethicist", "scientist", "scientists", "lab", "firm", "founder",
	"investor", "builder", "builders", "product", "company's", "hobbyist", "trainer", "safety",
	"policy", "model", "models", "ethics", "art", "artist", "tool", "tools", "app", "platform",
}

// notFollowedByHumanRole rejects "if you are an AI researcher".
func notFollowedByHumanRole(b []byte, s, e int) bool {
	i := e
	for i < len(b) && b[i] == ' ' {
		i++
	}
	j := i
	for j < len(b) && (isWordByte(b[j]) || b[j] == '\'' || b[j] == '-') {
		j++
	}
	return !slices.Contains(humanRoles, string(b[i:j]))
}

// userCompounds are nouns that make "the user" part of another noun:
// "without telling the user interface team".
var userCompounds = []string{
	"interface", "interfaces", "experience", "agent", "account", "accounts", "name", "names", "id",
	"ids", "base", "group", "groups", "guide", "manual", "profile", "profiles", "data", "story",
	"stories", "research", "table", "role", "roles", "journey", "flow", "settings", "session",
	"input", "space", "mode", "directory", "management", "list", "database", "record", "records",
}

// notCompoundUser rejects a match whose final "user" continues into a
// compound noun.
func notCompoundUser(b []byte, s, e int) bool {
	return notFollowedBy(b, e, userCompounds)
}

func notFollowedBy(b []byte, e int, words []string) bool {
	i := e
	for i < len(b) && b[i] == ' ' {
		i++
	}
	j := i
	for j < len(b) && isWordByte(b[j]) {
		j++
	}
	return !slices.Contains(words, string(b[i:j]))
}

// tagHasProse accepts a <system>-like tag only when sentences follow it (a
// data element such as Maven's <system>GitHub</system> is not a role tag)
// and it is a block: closed later, or opening a clause. A tag named inside
// a sentence ("the <system> element", "hidden <IMPORTANT> blocks") is talk
// about the tag.
func tagHasProse(b []byte, s, e int) bool {
	if !clauseStartBefore(b, s) {
		if _, end := toClosingTag(b, s, e); end == e {
			return false
		}
	}
	body := b[e:min(len(b), e+400)]
	if i := bytes.IndexByte(body, '<'); i >= 0 {
		body = body[:i]
	}
	words := 0
	run := 0
	for _, c := range body {
		if 'a' <= c && c <= 'z' {
			run++
			continue
		}
		if run >= 2 {
			words++
		}
		run = 0
	}
	if run >= 2 {
		words++
	}
	return words >= 3
}

// toClosingTag widens an opening tag to its whole block when the closing
// tag follows within 4 KiB, so redaction removes the injected text too.
func toClosingTag(b []byte, s, e int) (int, int) {
	name := b[s+1 : e-1]
	if i := bytes.IndexAny(name, " \n"); i >= 0 {
		name = name[:i]
	}
	closing := append(append([]byte("</"), name...), '>')
	rest := b[e:min(len(b), e+4096)]
	if i := bytes.Index(rest, closing); i >= 0 {
		return s, e + i + len(closing)
	}
	return s, e
}

// notPublicKey rejects a match on a public key (id_rsa.pub): sharing it is
// what it is for.
func notPublicKey(b []byte, s, e int) bool {
	return !bytes.HasPrefix(b[e:], []byte(".pub"))
}

// secretFieldWords: a parameter named for the secret it receives is an
// ordinary way to pass a credential ("put the API key in the api_key field").
var secretFieldWords = [][]byte{
	[]byte("key"), []byte("token"), []byte("auth"), []byte("password"), []byte("passwd"),
	[]byte("secret"), []byte("credential"), []byte("cookie"), []byte("session"), []byte("bearer"),
}

// sinkIsNotSecretField rejects a match whose destination is a parameter
// named for the secret itself.
func sinkIsNotSecretField(b []byte, s, e int) bool {
	m := b[s:e]
	for _, suffix := range [][]byte{[]byte("parameter"), []byte("argument"), []byte("param"), []byte("field"), []byte("arg"), []byte("property"), []byte("input"), []byte("value")} {
		if !bytes.HasSuffix(m, suffix) {
			continue
		}
		_, ws := prevWord(m, len(m)-len(suffix))
		name := m[max(0, ws-1) : len(m)-len(suffix)]
		for _, w := range secretFieldWords {
			if bytes.Contains(name, w) {
				return false
			}
		}
		return true
	}
	return true
}

// documentPlace matches what follows "the previous instructions" when they
// are a document's ("... on the wiki", "... in the README"), not the
// model's.
var documentPlace = newLazyRegexp(`^\s(?:on|in|for|from|of|about|at|inside|printed on|written on) (?:the|this|that|our|your|my|a) (?:[a-z]+ )?(?:wiki|page|website|site|readme|box|manual|docs?|documentation|recipe|form|sheet|ticket|email|letter|card|label|package|packaging|screen|installer|slide|notice|poster|sign|leaflet|guide|handout|bottle|machine|printer|device|intranet|portal|confluence|notion|binder|door|fridge)\b`)

// notInADocument rejects "ignore the previous instructions on the wiki".
func notInADocument(b []byte, s, e int) bool {
	return !documentPlace.Match(b[e:min(len(b), e+60)])
}

// knowAfter: what may follow "the user must not know" when it is about
// hiding an action rather than a fact the user is not entitled to ("the
// user must not know the admin password").
var knowAfter = []string{"", "that", "about", "what", "anything", "this", "it", "of", "where", "how", "why", "who", "when", "we", "you", "the", "these"}

// knowsNothingInParticular accepts "the user must not know." / "... know
// that ..." / "... find out about ..." and rejects "must not know the
// password" (a fact, not a concealed action).
func knowsNothingInParticular(b []byte, s, e int) bool {
	i := e
	for i < len(b) && b[i] == ' ' {
		i++
	}
	j := i
	for j < len(b) && isWordByte(b[j]) {
		j++
	}
	next := string(b[i:j])
	if next == "the" {
		// "must not know the message was forwarded" hides an action; "must
		// not know the admin password" is a fact: tell them by what follows.
		_, after := nextWords(b, j, 3)
		return slices.ContainsFunc(after, func(w string) bool {
			return w == "was" || w == "were" || w == "is" || w == "has" || w == "had" || w == "will"
		})
	}
	return slices.Contains(knowAfter, next)
}

// nextWords returns up to n words after position i.
func nextWords(b []byte, i, n int) (int, []string) {
	var words []string
	for len(words) < n && i < len(b) {
		for i < len(b) && !isWordByte(b[i]) {
			if b[i] == '.' || b[i] == '\n' || b[i] == ';' {
				return i, words
			}
			i++
		}
		j := i
		for j < len(b) && isWordByte(b[j]) {
			j++
		}
		if j > i {
			words = append(words, string(b[i:j]))
		}
		i = j
	}
	return i, words
}

// reportingVerbs introduce a reporting clause: "Checks whether a prompt
// asks the agent to <match>" reports on text; it does not issue the match.
var reportingVerbs = []string{"check", "test", "detect", "determin", "ask", "verif", "evaluat", "assess", "decid", "report", "flag", "classif"}

// inReportingClause reports whether before holds "<reporting verb>
// whether|if". It looks only at the words before each "whether" and "if",
// so a text full of "if" costs a few comparisons each.
func inReportingClause(before []byte) bool {
	for _, conj := range [][]byte{[]byte("whether"), []byte("if")} {
		for rest, off := before, 0; ; {
			i := bytes.Index(rest, conj)
			if i < 0 {
				break
			}
			at := off + i
			end := at + len(conj)
			wordEnds := end == len(before) || !isWordByte(before[end])
			if wordEnds && (at == 0 || !isWordByte(before[at-1])) {
				w, _ := prevWord(before, at)
				for _, v := range reportingVerbs {
					if strings.HasPrefix(w, v) {
						return true
					}
				}
			}
			rest, off = before[end:], end
		}
	}
	return false
}
