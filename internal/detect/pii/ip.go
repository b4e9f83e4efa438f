package pii

import (
	"net/netip"
	"strings"

	"github.com/mcpgate/mcpgate/internal/detect"
)

// IP addresses are validated by net/netip, and by default only public ones
// are reported (see Options.NonPublicIPs).

// matchIPv4 returns the end of the IPv4 address that starts at i, or -1.
// A dotted quad after "version" or "section" is not an address, nor is one
// that continues with more dotted parts (1.3.6.1.4.1, 4.4.8.8.in-addr.arpa).
func (d *Detector) matchIPv4(s string, i int) int {
	j := i
	for part := range 4 {
		if part > 0 {
			if byteAt(s, j) != '.' {
				return -1
			}
			j++
		}
		k := digitsEnd(s, j)
		if k == j || k-j > 3 {
			return -1
		}
		j = k
	}
	if !numberEndOK(s, j) || (byteAt(s, j) == '.' && isAlnum(byteAt(s, j+1))) {
		return -1
	}
	if isVersionWord(wordBefore(s, i)) || (j-i == 7 && keywordBefore(s, i, versionWindow, versionWords)) {
		return -1
	}
	addr, err := netip.ParseAddr(s[i:j])
	if err != nil || (!d.nonPublicIPs && !isPublic(addr)) {
		return -1
	}
	return j
}

// versionWords name what dotted numbers other than addresses number.
var versionWords = []string{"version", "ver", "release", "build", "firmware", "oid",
	"section", "chapter", "table", "figure", "fig", "step", "item", "clause", "rule"}

// versionWindow: a quad of one-digit numbers (4.2.1.3) looks like a version
// more than an address, so a version word anywhere this close before it
// rules it out. Public addresses of that shape are resolvers (1.1.1.1,
// 8.8.4.4), not anybody's personal data.
const versionWindow = 32

func isVersionWord(w string) bool {
	w = strings.TrimSuffix(w, ".")
	for _, v := range versionWords {
		if len(w) == len(v) && equalFoldASCII(w, v) {
			return true
		}
	}
	return false
}

func isIPv6Char(c byte) bool { return isHex(c) || c == ':' || c == '.' }

// scanIPv6 appends the IPv6 addresses in text. It looks at each run of hex
// digits, colons and dots that holds a colon.
func (d *Detector) scanIPv6(text string, dst []detect.Finding) []detect.Finding {
	for off := 0; off < len(text); {
		c := strings.IndexByte(text[off:], ':')
		if c < 0 {
			break
		}
		c += off
		start, end := c, c
		for start > off && isIPv6Char(text[start-1]) {
			start--
		}
		for end < len(text) && isIPv6Char(text[end]) {
			end++
		}
		off = end
		if s, e := d.ipv6In(text, start, end); e > 0 {
			dst = append(dst, finding(kindIPv6, s, e))
			off = e
		}
	}
	return dst
}

// ipv6In returns the IPv6 address in the run text[start:end], or e -1.
func (d *Detector) ipv6In(text string, start, end int) (s, e int) {
	for end > start && text[end-1] == '.' { // the end of a sentence
		end--
	}
	if end-start > 1 && text[end-1] == ':' && text[end-2] != ':' { // "addr: …"
		end--
	}
	if text[start] == ':' && byteAt(text, start+1) != ':' { // "ip:2001:…"
		start++
	} else if inWord(text, start) {
		return 0, -1
	}
	run := text[start:end]
	if len(run) < 2 || len(run) > 45 || !plausibleIPv6(run) {
		return 0, -1
	}
	next := byteAt(text, end)
	if next == '%' && d.nonPublicIPs { // zone: fe80::1%eth0
		z := end + 1
		for z < len(text) && (isAlnum(text[z]) || text[z] == '_' || text[z] == '-' || text[z] == '.') {
			z++
		}
		if z > end+1 {
			end = z
			next = byteAt(text, end)
		}
	}
	if isAlnum(next) || next == '_' {
		return 0, -1
	}
	addr, err := netip.ParseAddr(text[start:end])
	if err != nil || !addr.Is6() || (!d.nonPublicIPs && !isPublic(addr)) {
		return 0, -1
	}
	return start, end
}

// plausibleIPv6 is a cheap shape check before parsing: a clock time
// (12:30:45) or a MAC address has too few groups and no "::", and most
// runs of colons are one of those.
func plausibleIPv6(run string) bool {
	colons := strings.Count(run, ":")
	if colons < 2 || colons > 7 {
		return false
	}
	if strings.Contains(run, "::") {
		return strings.IndexFunc(run, func(r rune) bool { return r != ':' }) >= 0
	}
	return colons == 7 || (colons == 6 && strings.Contains(run, "."))
}

// nonPublic lists the special-purpose ranges (IANA registries, RFC 6890
// and later) that do not identify a host on the public Internet.
var nonPublic = func() []netip.Prefix {
	var ps []netip.Prefix
	for _, p := range []string{
		"0.0.0.0/8", "10.0.0.0/8", "100.64.0.0/10", "127.0.0.0/8",
		"169.254.0.0/16", "172.16.0.0/12", "192.0.0.0/24", "192.0.2.0/24",
		"192.88.99.0/24", "192.168.0.0/16", "198.18.0.0/15",
		"198.51.100.0/24", "203.0.113.0/24", "224.0.0.0/4", "240.0.0.0/4",
		// IPv6 outside 2000::/3 is never public; inside it:
		"2001::/23", "2001:db8::/32", "2002::/16", "3fff::/20",
	} {
		ps = append(ps, netip.MustParsePrefix(p))
	}
	return ps
}()

var globalUnicast6 = netip.MustParsePrefix("2000::/3")

// isPublic reports whether addr is a publicly routable unicast address.
// An IPv4-mapped IPv6 address is judged by its IPv4 address.
func isPublic(addr netip.Addr) bool {
	addr = addr.Unmap()
	if addr.Is6() && !globalUnicast6.Contains(addr) {
		return false
	}
	for _, p := range nonPublic {
		if p.Contains(addr) {
			return false
		}
	}
	return true
}
