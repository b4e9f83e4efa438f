package config

import (
	"fmt"
	"strings"
)

// Expand replaces ${VAR} and ${VAR:-default} in s. "$${" stands for a literal
// "${". A variable that is unset and has no default is an error naming it:
// an empty secret would fail later, far from its cause. The error never
// contains a variable's value.
func Expand(s string, lookup LookupFunc) (string, error) {
	return expand(s, lookup, nil)
}

// expand is Expand that tells found about every value taken from lookup
// (not defaults: those are written in the config itself).
func expand(s string, lookup LookupFunc, found func(name, value string)) (string, error) {
	if !strings.Contains(s, "${") {
		return s, nil
	}
	var b strings.Builder
	for {
		i := strings.Index(s, "${")
		if i < 0 {
			b.WriteString(s)
			return b.String(), nil
		}
		if i > 0 && s[i-1] == '$' {
			b.WriteString(s[:i-1])
			b.WriteString("${")
			s = s[i+2:]
			continue
		}
		b.WriteString(s[:i])
		end := strings.IndexByte(s[i:], '}')
		if end < 0 {
			return "", fmt.Errorf("unterminated %q (write \"$${\" for a literal \"${\")", s[i:])
		}
		ref := s[i+2 : i+end]
		name, def, hasDef := strings.Cut(ref, ":-")
		if !validVarName(name) {
			return "", fmt.Errorf("${%s}: %q is not a variable name", ref, name)
		}
		v, ok := lookup(name)
		switch {
		case ok && (v != "" || !hasDef):
			b.WriteString(v)
			if found != nil {
				found(name, v)
			}
		case hasDef:
			b.WriteString(def)
		default:
			return "", fmt.Errorf("${%s} is not set (set it in the environment, or write ${%s:-default})", name, name)
		}
		s = s[i+end+1:]
	}
}

func validVarName(name string) bool {
	if name == "" {
		return false
	}
	for i, c := range name {
		switch {
		case c == '_', c >= 'A' && c <= 'Z', c >= 'a' && c <= 'z':
		case c >= '0' && c <= '9' && i > 0:
		default:
			return false
		}
	}
	return true
}
