package pii

import (
	"github.com/mcpgate/mcpgate/internal/detect"
	"os"
	"strings"
	"testing"
)

// benchText is about 64 KiB of realistic tool output: testdata/tooloutput.txt
// (git log, kubectl, access logs, JSON, a table of customers, config)
// repeated.
func benchText(b *testing.B) string {
	data, err := os.ReadFile("testdata/tooloutput.txt")
	if err != nil {
		b.Fatal(err)
	}
	return strings.Repeat(string(data), 64<<10/len(data)+1)[:64<<10]
}

func BenchmarkScan(b *testing.B) {
	text := benchText(b)
	d := Default()
	var dst []detect.Finding
	b.SetBytes(int64(len(text)))
	b.ReportAllocs()
	for b.Loop() {
		dst = d.Scan(text, dst[:0])
	}
}

// BenchmarkScanProse is the common case of text the prefilter rejects.
func BenchmarkScanProse(b *testing.B) {
	text := strings.Repeat("The quick brown fox jumps over the lazy dog; nothing personal here. ", 1000)
	d := Default()
	b.SetBytes(int64(len(text)))
	b.ReportAllocs()
	for b.Loop() {
		d.Scan(text, nil)
	}
}
