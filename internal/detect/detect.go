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

// Streamer is a Detector that can also scan a text while it arrives: a
// gateway reading a result of megabytes from a pipe scans each piece as it
// comes, so that once the last piece is in, little is left to scan.
type Streamer interface {
	Detector
	// Stream starts the scan of one text that arrives in pieces.
	Stream() Stream
}

// Stream is one Streamer's scan of one text that arrives in pieces. One
// goroutine uses it at a time; like Scan, it keeps no text, only offsets.
type Stream interface {
	// Advance scans what it can of text, the text so far. Each call's text
	// begins with the bytes of the previous call's (it may be another
	// string: the bytes are what count).
	Advance(text string)
	// Finish appends to dst exactly what Scan(text, dst) appends, given the
	// whole text, which begins with the bytes of every text Advance was
	// given, and ends the stream.
	Finish(text string, dst []Finding) []Finding
	// Stop ends a stream that will not be finished.
	Stop()
}

// Alone is a Detector that may spread one Scan over several cores.
// ScanAlone appends exactly what Scan appends, on the caller's goroutine
// only: for a scan nobody waits for (a decision that only records, made
// after its answer left), which should take no more than one core from
// the work that is waited for.
type Alone interface {
	Detector
	ScanAlone(text string, dst []Finding) []Finding
}
