package injection

import (
	"bytes"
	"regexp/syntax"
)

// A rule is tried at a handful of word starts per trigger; most of them
// cannot begin a match ("the", "and"). Asking the regexp costs a bitmap
// reset proportional to its program and input, so each rule keeps the set
// of strings a match can begin with, computed once from its syntax tree,
// and a start is tried only when the text there begins with one of them.

const (
	prefixLen     = 4   // bytes of each prefix
	maxPrefixSets = 512 // beyond this many prefixes a rule is not filtered
)

// prefixFilter holds the possible beginnings of a match; a string shorter
// than prefixLen accepts any continuation. Empty means "no filter".
type prefixFilter [][]byte

func (f prefixFilter) admits(b []byte) bool {
	if len(f) == 0 {
		return true
	}
	for _, p := range f {
		if bytes.HasPrefix(b, p) {
			return true
		}
	}
	return false
}

// newPrefixFilter computes the filter of an anchored rule pattern. It is a
// superset of the real beginnings: whatever it cannot follow (a large
// class, a repetition) it accepts.
func newPrefixFilter(pattern string) prefixFilter {
	re, err := syntax.Parse(pattern, syntax.Perl)
	if err != nil {
		panic(err) // the same pattern compiled with regexp.MustCompile
	}
	set := map[string]bool{}
	if !prefixes([]*syntax.Regexp{re.Simplify()}, prefixLen, 0, set) || set[""] {
		return nil
	}
	f := make(prefixFilter, 0, len(set))
	for p := range set {
		f = append(f, []byte(p))
	}
	return f
}

// prefixes adds to set the beginnings (up to k bytes) of what seq matches,
// prefixed by head. It returns false when the set grows too large.
func prefixes(seq []*syntax.Regexp, k, depth int, set map[string]bool) bool {
	return walkPrefixes(seq, "", k, depth, set)
}

func walkPrefixes(seq []*syntax.Regexp, head string, k, depth int, set map[string]bool) bool {
	if len(set) > maxPrefixSets || depth > 64 {
		return false
	}
	if len(head) >= k || len(seq) == 0 {
		if len(head) > k {
			head = head[:k]
		}
		set[head] = true
		return true
	}
	n, rest := seq[0], seq[1:]
	switch n.Op {
	case syntax.OpEmptyMatch, syntax.OpBeginText, syntax.OpBeginLine, syntax.OpWordBoundary, syntax.OpNoWordBoundary:
		return walkPrefixes(rest, head, k, depth+1, set)
	case syntax.OpEndText, syntax.OpEndLine:
		set[head] = true // the match may end here: anything may follow
		return true
	case syntax.OpLiteral:
		lit := string(n.Rune)
		if n.Flags&syntax.FoldCase != 0 || !isASCII(lit) {
			set[head] = true
			return true
		}
		return walkPrefixes(rest, head+lit, k, depth+1, set)
	case syntax.OpCharClass:
		count := 0
		for i := 0; i < len(n.Rune); i += 2 {
			count += int(n.Rune[i+1]-n.Rune[i]) + 1
		}
		if count > 16 || n.Rune[len(n.Rune)-1] >= 0x80 {
			set[head] = true
			return true
		}
		for i := 0; i < len(n.Rune); i += 2 {
			for c := n.Rune[i]; c <= n.Rune[i+1]; c++ {
				if !walkPrefixes(rest, head+string(c), k, depth+1, set) {
					return false
				}
			}
		}
		return true
	case syntax.OpCapture:
		return walkPrefixes(append([]*syntax.Regexp{n.Sub[0]}, rest...), head, k, depth+1, set)
	case syntax.OpConcat:
		return walkPrefixes(append(append([]*syntax.Regexp{}, n.Sub...), rest...), head, k, depth+1, set)
	case syntax.OpAlternate:
		for _, sub := range n.Sub {
			if !walkPrefixes(append([]*syntax.Regexp{sub}, rest...), head, k, depth+1, set) {
				return false
			}
		}
		return true
	case syntax.OpQuest:
		return walkPrefixes(rest, head, k, depth+1, set) &&
			walkPrefixes(append([]*syntax.Regexp{n.Sub[0]}, rest...), head, k, depth+1, set)
	case syntax.OpStar, syntax.OpPlus, syntax.OpRepeat:
		// One pass through the body, then anything: a superset.
		if n.Op == syntax.OpStar || n.Op == syntax.OpRepeat && n.Min == 0 {
			if !walkPrefixes(rest, head, k, depth+1, set) {
				return false
			}
		}
		return walkPrefixes([]*syntax.Regexp{n.Sub[0]}, head, k, depth+1, set)
	}
	set[head] = true // anything else: accept any continuation
	return true
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}
