package policy

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/mcpgate/mcpgate/config"
	"github.com/mcpgate/mcpgate/internal/detect"
)

// The actions the detector policies take.
const (
	actionRedact = "redact"
	actionBlock  = "block"
	actionAudit  = "audit"
)

// textScan is a policy that runs a detector over every string value of a
// message (text content, structuredContent, embedded resource text,
// arguments, prompt messages): secrets, pii and injection are this with
// their own detector.
type textScan struct {
	name   string
	stages []Stage
	action string // actionRedact (only where the policy can), actionBlock or actionAudit
	det    detect.Detector
	// recordOnly holds the kinds that are recorded but never redacted or
	// blocked on, whatever the action: heuristics (high_entropy_string).
	recordOnly map[string]bool
	// one and many name what is found: "secret", "secrets".
	one, many string
	// redactsBodies: what the policy finds is kept out of the audit
	// trail's bodies (secrets, personal data; see BodyRedactor).
	redactsBodies bool
}

func (p *textScan) Name() string    { return p.name }
func (p *textScan) Stages() []Stage { return p.stages }

func (p *textScan) Decide(_ context.Context, in *Input) Decision {
	var t tally
	var s string
	var found []detect.Finding
	// take counts what was found in text and says whether to redact it.
	take := func(text string) bool {
		if acted := t.add(found, p.recordOnly); acted == 0 || p.action != actionRedact {
			return false
		}
		s = text
		return true
	}
	alone, _ := p.det.(detect.Alone)
	if !in.background {
		alone = nil
	}
	visit := func(text string, _ bool) bool {
		if alone != nil {
			found = alone.ScanAlone(text, found[:0])
		} else {
			found = p.det.Scan(text, found[:0])
		}
		if len(found) == 0 {
			return false
		}
		return take(text)
	}
	write := func(dst []byte) []byte { return appendRedacted(dst, s, found, p.recordOnly) }
	var msg []byte
	var err error
	if shared := in.shared.of(in.Message); shared != nil {
		if hits, finds, ok := shared.foundBy(p); ok {
			// Scanned while the message was read (prescan.go).
			msg = shared.appendFound(hits, finds, func(text string, f []detect.Finding) bool {
				found = f
				return take(text)
			}, write)
		} else {
			msg, err = shared.appendStrings(visit, write)
		}
	} else {
		msg, err = appendJSONStrings(in.Message, false, visit, write)
	}
	if err != nil {
		return p.unreadable(in, err)
	}
	if len(t.findings) == 0 {
		return Decision{}
	}
	slices.SortFunc(t.findings, func(a, b Finding) int { return strings.Compare(a.Kind, b.Kind) })
	d := Decision{Findings: t.findings}
	acted, kept := t.split(p.recordOnly)
	switch {
	case p.action == actionAudit:
		d.Action = Audit
		d.Reason = "found " + p.count(t.findings)
	case len(acted) == 0:
		d.Action = Audit
		d.Reason = "found " + p.count(kept) + "; audit only"
	case p.action == actionBlock:
		d.Action = Deny
		d.Reason = refusal(in) + ": it holds " + p.count(acted)
	default:
		d.Action = Modify
		d.Message = msg
		d.Reason = "redacted " + p.count(acted)
		if len(kept) > 0 {
			d.Reason += "; found " + p.count(kept) + ", audit only"
		}
	}
	return d
}

// unreadable decides on a message whose strings could not be found: it
// cannot be checked, so only an audit policy lets it through.
func (p *textScan) unreadable(in *Input, err error) Decision {
	why := fmt.Sprintf("it could not be checked for %s: not valid JSON (%v)", p.many, err)
	if p.action == actionAudit {
		return Decision{Action: Audit, Reason: why}
	}
	return Decision{Action: Deny, Reason: refusal(in) + ": " + why}
}

// count says how many were found of which kinds: "2 secrets
// (aws_access_key, github_token)". It names kinds, never values.
func (p *textScan) count(fs []Finding) string {
	n := 0
	kinds := make([]string, len(fs))
	for i, f := range fs {
		n += f.Count
		kinds[i] = f.Kind
	}
	noun := p.many
	if n == 1 {
		noun = p.one
	}
	return fmt.Sprintf("%d %s (%s)", n, noun, strings.Join(kinds, ", "))
}

// tally counts findings by kind; it allocates only once something is found.
type tally struct {
	findings []Finding
}

// add counts found and returns how many of them are to be acted on.
func (t *tally) add(found []detect.Finding, recordOnly map[string]bool) int {
	acted := 0
	for _, f := range found {
		if !recordOnly[f.Kind] {
			acted++
		}
		i := slices.IndexFunc(t.findings, func(g Finding) bool { return g.Kind == f.Kind })
		if i < 0 {
			t.findings = append(t.findings, Finding{Kind: f.Kind})
			i = len(t.findings) - 1
		}
		t.findings[i].Count++
	}
	return acted
}

// split separates the kinds acted on from those only recorded.
func (t *tally) split(recordOnly map[string]bool) (acted, kept []Finding) {
	for _, f := range t.findings {
		if recordOnly[f.Kind] {
			kept = append(kept, f)
		} else {
			acted = append(acted, f)
		}
	}
	return acted, kept
}

// redact replaces each finding in s, other than those only recorded, with
// [REDACTED:<kind>].
func redact(s string, found []detect.Finding, recordOnly map[string]bool) string {
	var b strings.Builder
	b.Grow(len(s))
	last := 0
	for _, f := range found {
		if recordOnly[f.Kind] || f.End <= last {
			continue
		}
		b.WriteString(s[last:max(last, f.Start)])
		b.WriteString("[REDACTED:")
		b.WriteString(f.Kind)
		b.WriteByte(']')
		last = f.End
	}
	b.WriteString(s[last:])
	return b.String()
}

// appendRedacted appends to dst, as a JSON string literal, what redact
// returns, without making it first: a big result with a secret in it is
// copied once, into the message that goes on.
func appendRedacted(dst []byte, s string, found []detect.Finding, recordOnly map[string]bool) []byte {
	dst = append(dst, '"')
	last := 0
	for _, f := range found {
		if recordOnly[f.Kind] || f.End <= last {
			continue
		}
		dst = appendJSONEscaped(dst, s[last:max(last, f.Start)])
		dst = append(dst, "[REDACTED:"...)
		dst = appendJSONEscaped(dst, f.Kind)
		dst = append(dst, ']')
		last = f.End
	}
	dst = appendJSONEscaped(dst, s[last:])
	return append(dst, '"')
}

// refusal says what a Deny refuses, for the client and the model: a tool
// or prompt by its name, anything else by its method only (a resource's
// URI may itself hold what was found).
func refusal(in *Input) string {
	named := in.Name != "" && (in.Kind == "tool" || in.Kind == "prompt")
	switch in.Stage {
	case Request:
		switch {
		case named && in.Kind == "tool":
			return "refused the call to tool " + in.Name
		case named:
			return "refused the request for prompt " + in.Name
		}
		return "refused the " + in.Method + " request"
	case Result:
		if named {
			return "withheld the result of " + in.Kind + " " + in.Name
		}
		return "withheld the " + in.Method + " result"
	}
	if named {
		return "withheld " + in.Kind + " " + in.Name
	}
	return "withheld a " + in.Method + " item"
}

// stagesOn reads a policy's "on": "requests" and "results".
func stagesOn(spec config.Policy) ([]Stage, error) {
	if len(spec.On) == 0 {
		return nil, fmt.Errorf(`%s.on: empty, so the policy would never act; leave "on" out for its default`, spec.Path)
	}
	var stages []Stage
	for _, on := range spec.On {
		var s Stage
		switch on {
		case "requests":
			s = Request
		case "results":
			s = Result
		default:
			return nil, fmt.Errorf(`%s.on: %s does not act on %q (it acts on "requests" and "results")`, spec.Path, spec.Name, on)
		}
		if !slices.Contains(stages, s) {
			stages = append(stages, s)
		}
	}
	return stages, nil
}

// actionOf returns the policy's action, which must be one of takes (the
// first being the default).
func actionOf(spec config.Policy, takes ...string) (string, error) {
	if spec.Action == "" {
		return takes[0], nil
	}
	if !slices.Contains(takes, spec.Action) {
		return "", fmt.Errorf("%s.action: %s takes %s, not %q", spec.Path, spec.Name, strings.Join(takes, ", "), spec.Action)
	}
	return spec.Action, nil
}

// checkKinds checks a policy's "kinds" against the names its detector
// knows, suggesting the closest name for a typo.
func checkKinds(spec config.Policy, known []string) error {
	if spec.Kinds != nil && len(spec.Kinds) == 0 {
		return fmt.Errorf(`%s.kinds: empty, so nothing would be looked for; leave "kinds" out for every kind`, spec.Path)
	}
	for _, k := range spec.Kinds {
		if slices.Contains(known, k) {
			continue
		}
		if s := closestKind(k, known); s != "" {
			return fmt.Errorf("%s.kinds: unknown kind %q; did you mean %q?", spec.Path, k, s)
		}
		if len(known) > 16 {
			return fmt.Errorf("%s.kinds: unknown kind %q (the %s policy's README section lists its %d kinds)", spec.Path, k, spec.Name, len(known))
		}
		return fmt.Errorf("%s.kinds: unknown kind %q (known: %s)", spec.Path, k, strings.Join(known, ", "))
	}
	return nil
}

// closestKind returns the name in known nearest to name, if near enough to
// be a typo of it.
func closestKind(name string, known []string) string {
	best, bestDist := "", 0
	for _, k := range known {
		d := editDistance(strings.ToLower(name), k)
		if d <= max(2, len(k)/4) && d < len(k)/2+1 && (best == "" || d < bestDist) {
			best, bestDist = k, d
		}
	}
	return best
}

// editDistance is the Levenshtein distance between a and b.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
