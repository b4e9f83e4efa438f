// Package pii finds personal data in text: e-mail addresses, phone
// numbers, payment cards, IBANs, IP addresses, US Social Security numbers
// and a few national identity numbers that carry a check character
// (Spanish DNI/NIE, Italian codice fiscale, Brazilian CPF, Dutch BSN,
// Indian Aadhaar). It implements [detect.Detector]; [Kinds] lists the kind
// names it reports, [Options] what can be configured.
//
//	d := pii.Default() // or pii.New(pii.Options{Kinds: []string{"email", "iban"}})
//	findings := d.Scan(text, nil)
//
// # How
//
// There are no regular expressions. A prefilter looks for the bytes every
// kind needs: an '@' (e-mail), a ':' (IPv6) or a digit (everything else);
// text without them costs three byte searches. E-mail addresses are
// grown outwards from each '@', IPv6 addresses from each run of hex digits
// and colons. The other kinds start a word (a digit, an upper-case letter,
// '+' or '('), so one pass walks the text word by word, skips words that
// start with a lower-case letter, and tries the kinds whose shape can
// start there: digit groups, separators, lengths. A shape is then
// validated: Luhn and the issuer ranges for cards, the per-country length
// and mod 97 for IBANs, net/netip and the special-purpose address
// registries for IPs, the SSA's rules for SSNs, the check character of
// each national id. Validation is what keeps false positives down: a
// 16-digit number that fails Luhn is not a card, a card-shaped or
// IBAN-shaped text that fails its check is skipped whole (its digits are
// not offered to the other kinds), and a number glued to a word, a
// decimal point or a longer dashed id is not taken from it.
//
// Numbers without a distinctive shape are reported only where the text
// says what they are, within 40 bytes before them: nine bare digits after
// "SSN" or "social security", a BSN after "BSN" or "burgerservicenummer",
// eleven bare digits after "CPF", twelve after "Aadhaar".
//
// # Not found, deliberately
//
//   - Unless [Options.AllIPs]: private, loopback, link-local, documentation
//     and other special-purpose IP addresses (a machine on someone's own
//     network, not a person); network addresses (ending in .0, or an IPv6
//     interface identifier of zero); dotted quads of numbers below 32
//     (1.2.3.4, 8.8.8.8, 4.2.11.2: sections, versions, OIDs, examples,
//     resolvers). Never: a dotted quad after a word such as "version",
//     "build" or "section", or with "V8" or "firmware" just before it.
//   - Phone numbers written as bare digits (4155552671) other than E.164
//     (+14155552671), local numbers without an area code (555-1234),
//     numbers with the "00" international prefix, vanity numbers: without
//     a shape they cannot be told from ids, counts and amounts.
//   - Card numbers that are masked, partial, signed (-4111…), inside a
//     longer run of digits or digit groups, or in a list of long numbers
//     that are not cards (int64 constants, ids: one in ten passes Luhn);
//     cards outside the major networks' ranges.
//   - Lower-case IBANs; IBANs of countries outside the SWIFT registry.
//   - Quoted or non-ASCII e-mail local parts and internationalised domains
//     written in Unicode (the xn-- form is found); module versions
//     (pkg@v1.2.3), asset names (icon@2x.png), URL userinfo
//     (https://user:pw@host) and scp-style SSH targets (git@host:repo).
//   - Identity numbers without a check character (UK NINO, passport
//     numbers, most national ids), names and postal addresses: they need
//     language models, not patterns.
package pii
