//go:build !linux

package policy

import "testing"

func reportCPU(b *testing.B, bytes int, loop func()) {
	for b.Loop() {
		loop()
	}
}
