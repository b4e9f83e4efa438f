// Package injection finds prompt injection in text and tool poisoning in
// tool and prompt definitions. It serves two policies:
//
//   - injection: [Detector] (a [detect.Detector]) on tool results, prompt
//     messages and resource text, the hot path;
//   - poisoning: [Checker] on each tool or prompt definition of a list, with
//     the JSON path of every finding and a check for names of other
//     servers' tools ([Peers]).
//
// The kinds are listed in [Kinds] with a one-line description each.
//
// # How
//
// Text is first put in a matching form (normalize.go): lower case,
// look-alike letters folded to ASCII (Cyrillic, Greek, full-width,
// mathematical alphanumerics, small capitals, circled and accented
// letters), invisible and format characters dropped, white space collapsed.
// The same pass reports hidden characters, tag characters and bidi controls
// (unicode.go), in the original text's offsets. Obfuscation by homoglyphs,
// invisible characters inside words or odd spacing therefore does not evade
// the phrase rules.
//
// Phrase rules (rules.go) are anchored regular expressions, each with
// trigger words. One pass cuts the matching form into words; only at a
// trigger word is a rule tried, at that word and the few before it, and only
// where the text begins with one of the literal prefixes the rule can match
// (prefilter.go, derived from the regexp's syntax tree). Ordinary text is
// not normalised at all (quiet.go): its ASCII words are its matching form's,
// a trigger word's rules are settled on the few bytes their prefix tests
// read, and only around a start they admit, or a character outside ASCII,
// is the matching form built, in a small window; the whole form is built
// only for a text where a rule may match. A text gets a bounded number of
// rule runs and of judgements in context for its length; past them, its
// rest is one phrase_flood finding, so that a text made of phrases stays
// cheap.
// A match is then judged in context (context.go):
//
//   - position: override and exfiltration verbs count only in imperative
//     position (clause start, or after "please", "you must", "now", "to"...)
//     and not negated, so "models often ignore previous instructions" and
//     "never ignore the previous instructions" are not findings;
//   - framing: a phrase quoted or given as an example in a sentence about
//     attacks, detection or test data ("blocks phrases such as 'ignore
//     previous instructions'"), after an example label ("Expected output:")
//     or inside a reporting clause ("checks whether a prompt asks the agent
//     to ...") is not a finding. The cue must come before the phrase ends.
//   - small checks per rule: a <system> tag counts only as a block with prose
//     (not Maven's <system>GitHub</system>, not "the <system> element"); "if
//     you are an AI" not when a human role follows ("an AI researcher");
//     "ignore the previous instructions on the wiki" is a document's.
//
// Encoded payloads (encoded.go): base64 (standard or URL), hex, \xNN and
// percent-encoded runs of 16 or more characters are sniffed (a few dozen
// bytes decoded); text is decoded in full up to 64 KiB and reported when it
// holds a shell command (download-and-run, reverse shells, rm -rf, chmod
// +x, interpreter one-liners, encoded PowerShell...) or injection phrasing.
// Images, hashes, UUIDs and JWTs decode to binary or to harmless JSON and
// are dropped.
//
// Definitions (definition.go) are walked with encoding/json in document
// order; every string value and every member name (read with '_' and '-' as
// spaces) is searched with the text rules plus secret_access and
// cross_tool_instruction, and for names of other servers' tools and servers
// (shadowing.go).
//
// # What is deliberately not reported
//
//   - Emoji ZWJ sequences, emoji subdivision flags (🏴 + tags + cancel), a
//     single variation selector after a base character, ZWJ/ZWNJ next to the
//     letters of scripts that need them (Arabic, Persian, Indic, Sinhala,
//     Myanmar, Khmer, Mongolian), ZWSP next to scripts written without
//     spaces (Thai, Lao, Khmer, Myanmar, Tibetan, CJK), a BOM at the start,
//     bidi embeddings and isolates with a right-to-left letter within 64
//     bytes. LRM, RLM, ALM, the soft hyphen and private-use characters are
//     never reported: they are common in ordinary RTL text, scraped pages
//     and terminal icon fonts, and cannot reorder or hide text by themselves.
//   - Trigger words on their own ("ignore this warning", "the system
//     prompt is stored in ...", "you are now logged in", "SYSTEM: disk
//     usage at 91%"), chat transcripts ("User: ... Assistant: ..."), JSON
//     messages with a "system" role.
//   - Secret access and cross-tool instructions in text: tutorials fetched
//     by a tool legitimately say "open ~/.aws/credentials"; those kinds are
//     for definitions only. A definition's own capability described in the
//     third person ("Reads ~/.aws/credentials and returns them") is not an
//     instruction to the model and is not reported either.
//   - Name collisions between servers: the gateway prefixes every name with
//     its server, so two servers' "search" tools cannot be confused; only a
//     definition that names another server's tool or server is shadowing.
//     Generic one-word tool names ("search", "fetch") count only when
//     quoted or in the gateway's server__tool form.
//   - Semantic mismatches (a calculator that "also posts the result to an
//     analytics endpoint"), letter-spaced or leetspeak phrases, other
//     languages, ROT13, base32, HTML entities, payloads nested in payloads:
//     out of reach of high-precision rules.
package injection
