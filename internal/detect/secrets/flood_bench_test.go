package secrets

import (
	"strings"
	"testing"
)

// BenchmarkScanBlockFlood is the adversarial case of the rules that search
// far past their keyword (a PEM block's footer, up to 64 KiB; a PuTTY
// file's MAC line, up to 16 KiB): a MiB of headers with nothing to find,
// longer than those searches, so that each header's search would read
// what the one before read.
func BenchmarkScanBlockFlood(b *testing.B) {
	for _, flood := range []struct{ name, unit string }{
		{"pem", "-----BEGIN RSA PRIVATE KEY-----\n"},
		{"putty", "PuTTY-User-Key-File-3: ssh-rsa\n"},
		{"putty-mac", strings.Repeat("PuTTY-User-Key-File-3: x\n", 600) + "Private-MAC: 00\n"},
	} {
		unit := flood.unit
		b.Run(flood.name, func(b *testing.B) {
			benchmarkScan(b, Default(), strings.Repeat(unit, (1<<20)/len(unit)))
		})
	}
}
