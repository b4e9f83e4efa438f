// Package secrets finds credentials in text: provider tokens and keys
// (AWS, GitHub, GitLab, Slack, Stripe, OpenAI, Anthropic and some 130
// other provider families), private key blocks, JWTs, and passwords inside
// database URLs, connection strings, URLs and Authorization headers. It
// implements detect.Detector; Kinds lists what it reports.
//
//	d := secrets.Default() // or secrets.New(secrets.Options{...})
//	findings := d.Scan(text, nil)
//
// # How
//
// Every rule (rules.go, one line each, written from the providers'
// documented formats) has keywords: the literal its token starts with
// (AKIA, ghp_, xoxb-, sk_live_, -----BEGIN) or, for values without a
// prefix, the name they are assigned to (DATADOG_API_KEY=…). Scan makes one
// pass over the text with an Aho–Corasick automaton of all keywords; a text
// without any keyword costs that pass and nothing else (no regexp, no
// allocation). At each keyword, only that keyword's rules run, anchored at
// the keyword, over a window as long as the longest match the pattern
// allows (patterns have no unbounded repetition, so windows are bounded).
// A token must not be glued to a letter or digit on either side.
//
// A candidate is then validated: GitHub and npm tokens must carry the
// CRC32 checksum of their random part; a JWT's header must decode to JSON
// with "alg" and its payload to a JSON object; a PEM block must hold at
// least 64 base64 characters; an Azure SAS signature must decode to 32
// bytes; a password in a URL must not be a reference, template or default.
// Bodies that read like placeholders are dropped (xxxx, ****, EXAMPLE,
// your…, runs like xxxxxx, abcdef or 12345678, fewer than six distinct
// characters).
// Where candidates overlap they merge into one finding, so that redacting
// it leaves no part of either behind.
//
// Each pattern is read and compiled once, when a keyword of its rule is
// first found. Worst case: a text crafted of keywords costs at most one
// attempt per run of a token's characters (a failed token rule skips the
// keywords further inside that run), so
// Scan stays linear in the text, at some tens of MB/s in the worst case
// measured (BenchmarkScanKeywordFlood).
//
// # A text that arrives in pieces
//
// Stream scans a text while it arrives (detect.Streamer), as a gateway
// reads a big result from a pipe: each Advance, given the text so far,
// tries the keywords that end at least streamReach bytes before its end
// (64 KiB and a little more: a PEM block's search for its footer, the
// farthest any rule reads), in Scan's order and with Scan's state, so
// each gets Scan's outcome. A PuTTY file whose MAC's digits reach the end
// of the text so far, and a run of entropy bytes that does, wait for the
// next bytes. Finish does the rest and resolves the candidates as Scan
// does: its findings are Scan's, wherever the text was cut, for about
// the CPU of one Scan in all, and once the last piece is in, about
// streamReach bytes are left to scan.
//
// # What it does not find, on purpose
//
//   - Secrets with no documented shape and no telling name: a random
//     string is reported only by the opt-in high-entropy heuristic
//     (Options.HighEntropy, kind high_entropy_string), which is meant for
//     audit, not redaction: it cannot tell a key from an ID or a nonce.
//   - Hex digests, git SHAs, UUIDs, lockfile integrity values, data URIs
//     and base64 blobs, even with HighEntropy on.
//   - Documentation examples and templates: placeholder bodies (above),
//     checksum failures (GitHub's own examples), $VAR, ${VAR}, {{ var }},
//     <YOUR_KEY>, %s, and default passwords (password, postgres, guest…).
//   - Provider names alone: datadog_trace_id = <hex> is not a Datadog key;
//     the name must also say key, token, secret, pass, auth or cred.
//   - Public material: certificates, public keys, Twilio account SIDs,
//     Stripe publishable keys.
//   - Fine-grained GitHub tokens (github_pat_) are matched by shape only:
//     their checksum scheme is not public.
//   - A token glued to the end of a longer run of its own characters
//     (the price of the linear worst case above), tokens split across
//     lines, and secrets encoded again (base64 of a key, URL-escaped
//     tokens other than Azure signatures).
//
// Texts are expected decoded: the policy layer passes JSON strings
// unescaped. Private key blocks whose line breaks arrive as the two
// characters \n (a key pasted into an .env value) are found as well.
package secrets
