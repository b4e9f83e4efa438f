package config

import (
	"net/url"
	"sort"
	"strings"
)

// minSecretLen is the shortest value treated as a secret. Shorter values
// ("1", "on", "dev") would blank out ordinary words in every message, and
// hold too little to be a credential.
const minSecretLen = 4

// secretSet collects the values ${VAR}s expanded to, so that messages can
// name the variable instead of showing its value. Every expanded value is
// treated as a secret: the config cannot know which ones are, and a path or
// an address shown as ${VAR} loses nothing the operator does not know.
type secretSet struct {
	names map[string]string // value → the first variable that held it
}

func (s *secretSet) add(name, value string) {
	if len(value) < minSecretLen {
		return
	}
	if s.names == nil {
		s.names = map[string]string{}
	}
	if _, ok := s.names[value]; !ok {
		s.names[value] = name
	}
}

// redactor builds the replacer, or nil when there is nothing to hide. Each
// value is also matched as it looks inside a URL (escaped), where paths and
// queries show it; longer values come first, so that a value containing
// another is replaced whole.
func (s *secretSet) redactor() *redactor {
	if len(s.names) == 0 {
		return nil
	}
	type pair struct{ old, name string }
	var pairs []pair
	for v, name := range s.names {
		forms := []string{v, url.PathEscape(v), url.QueryEscape(v)}
		for i, f := range forms {
			if !contains(forms[:i], f) {
				pairs = append(pairs, pair{f, name})
			}
		}
	}
	sort.Slice(pairs, func(i, j int) bool {
		if len(pairs[i].old) != len(pairs[j].old) {
			return len(pairs[i].old) > len(pairs[j].old)
		}
		return pairs[i].old < pairs[j].old
	})
	r := &redactor{names: s.names}
	var args []string
	for _, p := range pairs {
		r.values = append(r.values, p.old)
		r.shown = append(r.shown, "${"+p.name+"}")
		args = append(args, p.old, "${"+p.name+"}")
	}
	r.replacer = strings.NewReplacer(args...)
	return r
}

type redactor struct {
	names    map[string]string // value → the variable shown for it (see secretSet)
	values   []string          // every form matched, to skip the replacer when none is there
	shown    []string          // what replaces each of values
	replacer *strings.Replacer
}

func (r *redactor) redact(s string) string {
	if r == nil {
		return s
	}
	for _, v := range r.values {
		if strings.Contains(s, v) {
			return r.replacer.Replace(s)
		}
	}
	return s
}

// redactCut is redact for s cut short at its end. The end is checked
// first, on s as it is: a value there may be cut, or whole but also the
// start of a longer one; the longest match wins, a whole value on a tie.
func (r *redactor) redactCut(s string) string {
	if r == nil {
		return s
	}
	best, whole, shown := 0, false, ""
	for i, v := range r.values {
		for n := min(len(v), len(s)); n >= minSecretLen && (n > best || n == best && !whole); n-- {
			if strings.HasSuffix(s, v[:n]) {
				best, whole, shown = n, n == len(v), r.shown[i]
				break
			}
		}
	}
	if best == 0 {
		return r.redact(s)
	}
	return r.redact(s[:len(s)-best]) + shown
}

// Redact returns s with every value that a ${VAR} in the config expanded to
// replaced by "${VAR}". Apply it to any text that leaves mcpgate (errors,
// logs, the audit trail): values from the environment are often secrets.
// Values shorter than 4 characters are left alone.
func (c *Config) Redact(s string) string {
	if c == nil {
		return s
	}
	return c.redactor.redact(s)
}

// RedactCut is Redact for text cut short at its end (a long line kept up
// to a limit, the start of a body): a value cut there leaves its start,
// which Redact cannot recognise. That start is replaced by "${VAR}" too
// when it is at least 4 characters long; a shorter one is left, as values
// shorter than that are. s must end where the cut was made.
func (c *Config) RedactCut(s string) string {
	if c == nil {
		return s
	}
	return c.redactor.redactCut(s)
}

// AlsoHide makes c hide, beside its own values, every value old hides. A
// config that replaces another while mcpgate runs takes it on: what the
// servers started with the old values say may still be on its way, and a
// value once a secret stays one after a reload or two. c's own variable
// names win where both hold a value.
func (c *Config) AlsoHide(old *Config) {
	if c == nil || old == nil || old.redactor == nil {
		return
	}
	var set secretSet
	if c.redactor != nil {
		for v, name := range c.redactor.names {
			set.add(name, v)
		}
	}
	for v, name := range old.redactor.names {
		set.add(name, v)
	}
	c.redactor = set.redactor()
}
