package pii

import (
	"net/netip"
	"strings"

	"github.com/mcpgate/mcpgate/internal/detect"
)

// IP addresses are validated by net/netip, and by default only public ones
// are reported (see Options.AllIPs).

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
	if !d.allIPs && smallOctets(s[i:j]) {
		return -1
	}
	addr, err := netip.ParseAddr(s[i:j])
	if err != nil || (!d.allIPs && (!isPublic(addr) || addr.As4()[3] == 0)) {
		return -1
	}
	if isVersionWord(wordBefore(s, i)) || keywordBefore(s, i, versionWindow, versionKeywords) {
		return -1
	}
	return j
}

// versionWords name what dotted numbers other than addresses number.
var versionWords = []string{"version", "ver", "v", "rev", "revision", "release", "build", "firmware",
	"oid", "section", "chapter", "table", "figure", "fig", "step", "item", "clause", "rule"}

// versionKeywords rule out a dotted quad anywhere in the versionWindow
// bytes before it ("update V8 to 9.6.180.14"): words that hardly ever lead
// to an address.
var versionKeywords = []string{"version", "v8", "firmware", "bump"}

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

// smallOctets reports whether every number of a dotted quad is below 32
// (1.2.3.4, 8.8.8.8, 4.2.11.2): the shape of section, version and OID
// numbers, examples and public resolvers, and of one address in 4000.
func smallOctets(quad string) bool {
	v := 0
	for k := 0; k <= len(quad); k++ {
		if k == len(quad) || quad[k] == '.' {
			if v >= 32 {
				return false
			}
			v = 0
			continue
		}
		v = v*10 + int(quad[k]-'0')
	}
	return true
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
	if next == '%' && d.allIPs { // zone: fe80::1%eth0
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
	if err != nil || !addr.Is6() || (!d.allIPs && (!isPublic(addr) || isNetwork(addr))) {
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
		"192.31.196.0/24", "192.52.193.0/24", "192.88.99.0/24",
		"192.168.0.0/16", "192.175.48.0/24", "198.18.0.0/15",
		"198.51.100.0/24", "203.0.113.0/24", "224.0.0.0/4", "240.0.0.0/4",
		// IPv6 outside 2000::/3 is never public; inside it:
		"2001::/23", "2001:db8::/32", "2002::/16", "3fff::/20",
	} {
		ps = append(ps, netip.MustParsePrefix(p))
	}
	return ps
}()

var globalUnicast6 = netip.MustParsePrefix("2000::/3")

// isNetwork reports whether the interface identifier (the low 64 bits) of
// an IPv6 address is zero: 2001:4860:: names a network (or its
// subnet-router anycast), never a person's device. (IPv4 addresses ending
// in .0 are left out for the same reason.)
func isNetwork(addr netip.Addr) bool {
	if addr.Is4In6() {
		return false
	}
	b := addr.As16()
	for _, x := range b[8:] {
		if x != 0 {
			return false
		}
	}
	return true
}

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
