package policy

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"path"
	"strings"
	"unicode/utf8"

	"github.com/mcpgate/mcpgate/config"
	"github.com/mcpgate/mcpgate/internal/rawjson"
)

// The args policy holds tools/call's named arguments to the operator's
// rules: a regular expression they must match (allow), one they must not
// (deny), a length in characters they must not pass (max_length).
//
// A string argument is checked as the string it stands for (escapes
// decoded). Any other value is checked as its JSON text, re-encoded so that
// no escape can hide a match (numbers kept as written), and deny is also
// tried on every string inside it, keys too: a pattern with \s must not be
// dodged by sending ["rm\n-rf"] where the text would hold a backslash and
// an n. null counts as absent, and an absent argument breaks no rule: the
// server's own schema says what is required.

type argsPolicy struct {
	name  string
	rules []config.ArgRule
	block bool
}

func newArgs(spec config.Policy, env Env) (Policy, error) {
	if spec.Action != "" && spec.Action != "block" && spec.Action != "audit" {
		return nil, fmt.Errorf(`%s.action: args takes "block" or "audit", not %q`, spec.Path, spec.Action)
	}
	if len(spec.Rules) == 0 {
		return nil, fmt.Errorf(`%s.rules: empty; give rules like {"tool": "run_query", "arg": "sql", "deny": "(?i)\\bdrop\\b"}`, spec.Path)
	}
	// The rules' regexps were compiled by config.Load, once.
	rules := append([]config.ArgRule(nil), spec.Rules...)
	for i := range rules {
		r := &rules[i]
		if r.Path == "" {
			r.Path = fmt.Sprintf("%s.rules[%d]", spec.Path, i)
		}
		where := r.Path
		if _, err := path.Match(r.Tool, ""); err != nil {
			return nil, fmt.Errorf("%s.tool: %q is not a valid glob: %v", where, r.Tool, err)
		}
		if r.Arg == "" {
			return nil, fmt.Errorf("%s.arg: missing: the argument the rule is about", where)
		}
		if r.Allow == nil && r.Deny == nil && r.MaxLength <= 0 {
			return nil, fmt.Errorf(`%s: says nothing: give "allow", "deny" or "max_length"`, where)
		}
	}
	return &argsPolicy{name: spec.Name, rules: rules, block: spec.Action != "audit"}, nil
}

func (p *argsPolicy) Name() string    { return p.name }
func (p *argsPolicy) Stages() []Stage { return requestStage }

// Finding kinds of the args policy: which check an argument failed.
const (
	argKindNotAllowed = "not_allowed" // does not match allow
	argKindDenied     = "denied"      // matches deny
	argKindTooLong    = "too_long"    // longer than max_length
	argKindInvalid    = "invalid"     // the params cannot be read
)

// argFault is one broken rule.
type argFault struct {
	rule  *config.ArgRule
	key   string // the argument as the client wrote its name
	kind  string
	cause string
}

func (p *argsPolicy) Decide(ctx context.Context, in *Input) Decision {
	if in.Stage != Request || in.Method != "tools/call" {
		return Decision{}
	}
	tool := in.UpstreamName
	if tool == "" {
		tool = in.Name
	}
	// Most calls are to tools no rule names: they cost a glob match per
	// rule and no parsing.
	var args rawjson.MemberList
	parsed := false
	var faults []argFault
	for i := range p.rules {
		r := &p.rules[i]
		if ok, _ := path.Match(r.Tool, tool); !ok {
			continue
		}
		if !parsed {
			var err error
			if args, err = argMembers(in.Message); err != nil {
				// The server might read unreadable params differently from
				// here (a duplicate key it takes the last of).
				d := Decision{Action: Deny, Reason: "the arguments cannot be read: " + err.Error(), Findings: []Finding{{Kind: argKindInvalid, Count: 1}}}
				if !p.block {
					d.Action = Audit
				}
				return d
			}
			parsed = true
		}
		for _, m := range args {
			// As Go's encoding/json matches keys to a server's fields, so
			// that "SQL" does not slip past a rule on "sql".
			if !strings.EqualFold(m.Key, r.Arg) || string(m.Value) == "null" {
				continue
			}
			if f, bad := checkArg(r, m.Value); bad {
				f.key = m.Key
				faults = append(faults, f)
				if p.block {
					return p.decision(in, faults)
				}
			}
		}
	}
	if len(faults) == 0 {
		return Decision{}
	}
	return p.decision(in, faults)
}

func (p *argsPolicy) decision(in *Input, faults []argFault) Decision {
	tool := in.Name
	if tool == "" {
		tool = in.UpstreamName
	}
	f := faults[0]
	d := Decision{Action: Audit, Reason: fmt.Sprintf("argument %q of tool %q %s (rule %s)", f.key, tool, f.cause, f.rule.Path)}
	if len(faults) > 1 {
		d.Reason += fmt.Sprintf(" (and %d more)", len(faults)-1)
	}
	if p.block {
		d.Action = Deny
	}
	for _, kind := range []string{argKindNotAllowed, argKindDenied, argKindTooLong} {
		n := 0
		for _, f := range faults {
			if f.kind == kind {
				n++
			}
		}
		if n > 0 {
			d.Findings = append(d.Findings, Finding{Kind: kind, Count: n})
		}
	}
	return d
}

func argMembers(params []byte) (rawjson.MemberList, error) {
	ms, err := rawjson.Members(params)
	if err != nil {
		return nil, err
	}
	raw, ok := ms.Get("arguments")
	if !ok || string(raw) == "null" {
		return nil, nil
	}
	args, err := rawjson.SplitValid(raw)
	if err != nil {
		return nil, fmt.Errorf("arguments must be a JSON object")
	}
	return args, nil
}

// checkArg checks one argument's value against one rule. The cause never
// quotes the value, nor the pattern (a denied pattern shown is a pattern
// learnt).
func checkArg(r *config.ArgRule, raw []byte) (argFault, bool) {
	var text string
	var inner []string // the strings inside a non-string value, for deny
	if raw[0] == '"' {
		s, err := rawjson.Unquote(raw)
		if err != nil {
			return argFault{rule: r, kind: argKindNotAllowed, cause: "is not a valid JSON string"}, true
		}
		text = s
	} else {
		var err error
		if text, inner, err = argJSONText(raw); err != nil {
			return argFault{rule: r, kind: argKindNotAllowed, cause: "is not valid JSON"}, true
		}
	}
	if r.MaxLength > 0 && len(text) > r.MaxLength {
		if n := utf8.RuneCountInString(text); n > r.MaxLength {
			return argFault{rule: r, kind: argKindTooLong, cause: fmt.Sprintf("is %d characters long; at most %d are allowed", n, r.MaxLength)}, true
		}
	}
	if r.Deny != nil {
		denied := r.Deny.MatchString(text)
		for _, s := range inner {
			denied = denied || r.Deny.MatchString(s)
		}
		if denied {
			return argFault{rule: r, kind: argKindDenied, cause: "matches a pattern its rule denies"}, true
		}
	}
	if r.Allow != nil && !r.Allow.MatchString(text) {
		return argFault{rule: r, kind: argKindNotAllowed, cause: "does not match the pattern its rule allows"}, true
	}
	return argFault{}, false
}

// argJSONText returns a non-string JSON value's text, re-encoded (escapes
// decoded where JSON allows, <, > and & left alone, numbers as written,
// object keys sorted), and every string inside it, keys included and
// duplicates too, decoded.
func argJSONText(raw []byte) (string, []string, error) {
	var strs []string
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	for {
		tok, err := dec.Token()
		if err != nil {
			break
		}
		if s, ok := tok.(string); ok {
			strs = append(strs, s)
		}
	}
	dec = json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return "", nil, err
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return "", nil, err
	}
	return strings.TrimSuffix(b.String(), "\n"), strs, nil
}
