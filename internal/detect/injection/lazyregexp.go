package injection

import (
	"regexp"
	"sync"
)

// lazyRegexp is a regular expression compiled the first time it is used.
// The package has dozens (a rule each, and a few for context): compiled at
// start they cost milliseconds and megabytes in every process of the
// binary, a gateway without a detector policy and each server's warden
// included, and most rules are never tried on most texts.
type lazyRegexp struct {
	pattern string
	re      func() *regexp.Regexp
}

func newLazyRegexp(pattern string) *lazyRegexp {
	return &lazyRegexp{pattern, sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(pattern) })}
}

// String is the source pattern, as regexp.Regexp's String: it needs no
// compiling.
func (l *lazyRegexp) String() string { return l.pattern }

func (l *lazyRegexp) Match(b []byte) bool            { return l.re().Match(b) }
func (l *lazyRegexp) MatchString(s string) bool      { return l.re().MatchString(s) }
func (l *lazyRegexp) FindIndex(b []byte) []int       { return l.re().FindIndex(b) }
func (l *lazyRegexp) FindStringIndex(s string) []int { return l.re().FindStringIndex(s) }
