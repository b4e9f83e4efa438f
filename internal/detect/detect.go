// Package detect holds what the detectors of mcpgate's policies share: a
// finding in a text, and the contract every detector keeps. The detectors
// themselves live in the packages below (secrets, pii, injection); they know
// nothing of MCP, JSON or transports: text in, findings out.
package detect

// Finding is one match in a text: its kind (a stable, documented name such
// as "aws_access_key" or "email", used in [REDACTED:<kind>] and in audit
// records) and where it is, as byte offsets: text[Start:End].
type Finding struct {
	Kind  string
	Start int
	End   int
}

// Detector finds what it looks for in a text.
//
// Scan appends the findings in text to dst and returns it, in order of
// Start; findings do not overlap (where two rules match the same bytes, the
// detector keeps one). It must be safe for concurrent use, must not keep
// text, and must not compile anything per call: rules are compiled once,
// when the detector is built or when a rule is first needed. Most texts contain nothing: a detector should
// reject them with a cheap prefilter (keywords, character classes) before
// running any regular expression.
type Detector interface {
	Scan(text string, dst []Finding) []Finding
}
