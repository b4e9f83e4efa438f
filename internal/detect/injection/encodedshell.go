package injection

import (
	"bytes"
	"regexp/syntax"
	"slices"
	"sync"
)

// Most runs decoded in full are short and hold no command (a float's
// sixteen digits read as hex, an id that decodes to printable bytes), and
// shellCommand cost microseconds each to say so: more than the rest of
// the run's scan. Every match of shellCommand holds one of a few strings
// ("curl", "/dev/", "sh", "rm", "&&"...), derived from the expression
// itself: where the text holds none, it is not run.

// shellCommandNeeds returns the strings one of which every match of
// shellCommand holds, built once.
var shellCommandNeeds = sync.OnceValue(func() [][]byte {
	re, err := syntax.Parse(shellCommand.String(), syntax.Perl)
	if err != nil {
		panic(err) // shellCommand compiles: it parses
	}
	needs, ok := requiredStrings(re.Simplify())
	if !ok {
		return nil // nothing known: shellCommand always runs
	}
	slices.SortFunc(needs, bytes.Compare)
	return slices.CompactFunc(needs, bytes.Equal)
})

// mayMatchShellCommand reports whether lower may match shellCommand:
// false only when it holds none of the strings every match holds.
func mayMatchShellCommand(lower []byte) bool {
	needs := shellCommandNeeds()
	if needs == nil {
		return true
	}
	for _, s := range needs {
		if bytes.Contains(lower, s) {
			return true
		}
	}
	return false
}

// maxClassStrings bounds the characters of a class taken as strings one
// of which a match holds: a bigger class says little and costs a look each.
const maxClassStrings = 4

// requiredStrings returns strings one of which every match of re holds,
// and false when it knows none.
func requiredStrings(re *syntax.Regexp) ([][]byte, bool) {
	if re.Flags&syntax.FoldCase != 0 {
		return nil, false // text is matched lower-cased, and so are these
	}
	switch re.Op {
	case syntax.OpLiteral:
		return [][]byte{[]byte(string(re.Rune))}, true
	case syntax.OpCharClass:
		var out [][]byte
		for k := 0; k+1 < len(re.Rune); k += 2 {
			for r := re.Rune[k]; r <= re.Rune[k+1]; r++ {
				if len(out) == maxClassStrings {
					return nil, false
				}
				out = append(out, []byte(string(r)))
			}
		}
		return out, len(out) > 0
	case syntax.OpCapture, syntax.OpPlus:
		return requiredStrings(re.Sub[0])
	case syntax.OpRepeat:
		if re.Min >= 1 {
			return requiredStrings(re.Sub[0])
		}
	case syntax.OpConcat:
		// Any part's strings will do: the one whose shortest is longest.
		var best [][]byte
		for _, sub := range re.Sub {
			if s, ok := requiredStrings(sub); ok && (best == nil || shortest(s) > shortest(best)) {
				best = s
			}
		}
		return best, best != nil
	case syntax.OpAlternate:
		var out [][]byte
		for _, sub := range re.Sub {
			s, ok := requiredStrings(sub)
			if !ok {
				return nil, false
			}
			out = append(out, s...)
		}
		return out, true
	}
	return nil, false
}

func shortest(s [][]byte) int {
	return len(slices.MinFunc(s, func(a, b []byte) int { return len(a) - len(b) }))
}
