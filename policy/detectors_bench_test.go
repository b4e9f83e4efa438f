package policy

import (
	"context"
	"strings"
	"testing"

	"github.com/mcpgate/mcpgate/config"
	"github.com/mcpgate/mcpgate/internal/detect"
	"github.com/mcpgate/mcpgate/internal/detect/injection"
	"github.com/mcpgate/mcpgate/internal/detect/pii"
	"github.com/mcpgate/mcpgate/internal/detect/secrets"
)

// defaultDetectorSet is the policy set that applies when the config has no
// "policies": secrets (redact, requests and results), injection (audit,
// results), poisoning (audit, lists).
func defaultDetectorSet(tb testing.TB) Chain {
	tb.Helper()
	var chain Chain
	for _, c := range []struct {
		make func(config.Policy, Env) (Policy, error)
		spec config.Policy
	}{
		{newSecrets, config.Policy{Name: "secrets", Path: "policies[0]", Enabled: true, Action: "redact", On: []string{"requests", "results"}}},
		{newInjection, config.Policy{Name: "injection", Path: "policies[1]", Enabled: true, Action: "audit", On: []string{"results"}}},
		{newPoisoning, config.Policy{Name: "poisoning", Path: "policies[2]", Enabled: true, Action: "audit"}},
	} {
		p, err := c.make(c.spec, Env{})
		if err != nil {
			tb.Fatal(err)
		}
		chain = append(chain, p)
	}
	return chain
}

// BenchmarkDefaultSetResult4K is the cost the default policy set adds to
// a tools/call: its Result stage on a 4 KB result with nothing to find.
// The issue asks that a call through mcpgate with the default set stay
// within 1.2x of the same call with no policy.
func BenchmarkDefaultSetResult4K(b *testing.B) {
	chain := defaultDetectorSet(b)
	for _, bc := range []struct{ name, msg string }{
		{"text", toolResult4K()},
		{"structured", structuredResult4K()},
	} {
		b.Run(bc.name, func(b *testing.B) {
			in := &Input{Stage: Result, Session: "s1", Server: "fs", Method: "tools/call", Kind: "tool",
				Name: "fs__read_file", UpstreamName: "read_file", Message: []byte(bc.msg)}
			ctx := context.Background()
			b.SetBytes(int64(len(bc.msg)))
			b.ReportAllocs()
			for b.Loop() {
				msg, records, deny := chain.Run(ctx, in)
				if deny != nil || len(records) != 0 || len(msg) != len(in.Message) {
					b.Fatalf("ordinary output: records %v, deny %v", records, deny)
				}
			}
		})
	}
}

// corpusSize is the text each corpus benchmark scans: big enough that a
// result of megabytes is what is measured, small enough to build quickly.
const corpusSize = 1 << 20

// BenchmarkDetectorCorpus is each default detector's throughput (MB/s) on
// each corpus (corpus_test.go): the text as one string, as a big tool
// result's text content reaches the detector.
func BenchmarkDetectorCorpus(b *testing.B) {
	detectors := []struct {
		name string
		det  detect.Detector
	}{
		{"secrets", secrets.Default()},
		{"pii", pii.Default()},
		{"injection", injection.Default()},
	}
	for _, name := range corpusNames {
		text := corpusText(b, name, corpusSize)
		for _, d := range detectors {
			b.Run(d.name+"/"+name, func(b *testing.B) {
				b.SetBytes(int64(len(text)))
				b.ReportAllocs()
				dst := d.det.Scan(text, nil) // built, scratch grown
				reportCPU(b, len(text), func() { dst = d.det.Scan(text, dst[:0]) })
			})
		}
	}
}

// BenchmarkDefaultSetCorpus is the default policy set's Result stage on a
// tools/call result whose text content is each corpus: what the set adds
// to a big result, walking the JSON included.
func BenchmarkDefaultSetCorpus(b *testing.B) {
	chain := defaultDetectorSet(b)
	ctx := context.Background()
	for _, name := range corpusNames {
		msg := []byte(toolResult(corpusText(b, name, corpusSize)))
		b.Run(name, func(b *testing.B) {
			in := &Input{Stage: Result, Session: "s1", Server: "fs", Method: "tools/call", Kind: "tool",
				Name: "fs__read_file", UpstreamName: "read_file", Message: msg}
			chain.Run(ctx, in) // the detectors built, their scratch grown
			b.SetBytes(int64(len(msg)))
			b.ReportAllocs()
			reportCPU(b, len(msg), func() {
				if _, _, deny := chain.Run(ctx, in); deny != nil {
					b.Fatalf("denied: %v", deny)
				}
			})
		})
	}
}

// BenchmarkDefaultSetResult10MiB is the default set's Result stage on a
// 10 MiB text result of one repeated byte (BenchmarkPerfBigResult's): the
// policies' share of that call, without the noise of three processes.
func BenchmarkDefaultSetResult10MiB(b *testing.B) {
	chain := defaultDetectorSet(b)
	msg := `{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"` +
		strings.Repeat("x", 10<<20) + `"}],"isError":false}}`
	in := &Input{Stage: Result, Session: "s1", Server: "fs", Method: "tools/call", Kind: "tool",
		Name: "fs__read_file", UpstreamName: "read_file", Message: []byte(msg)}
	ctx := context.Background()
	b.SetBytes(int64(len(msg)))
	b.ReportAllocs()
	for b.Loop() {
		out, records, deny := chain.Run(ctx, in)
		if deny != nil || len(records) != 0 || len(out) != len(in.Message) {
			b.Fatalf("ordinary output: records %v, deny %v", records, deny)
		}
	}
}

// BenchmarkDefaultSetResultMixed10MiB is the default set's Result stage on
// BenchmarkPerfBigResult's 10MiB-mixed result (JSON, logs and prose), with
// the bytes it allocates per Run: what the policies add to that call's
// time and memory, without the noise of three processes.
func BenchmarkDefaultSetResultMixed10MiB(b *testing.B) {
	chain := defaultDetectorSet(b)
	in := toolCall(Result, toolResult(corpusText(b, "mixed", 10<<20)))
	ctx := context.Background()
	chain.Run(ctx, in) // the detectors built, their scratch grown
	b.SetBytes(int64(len(in.Message)))
	b.ReportAllocs()
	reportCPU(b, len(in.Message), func() {
		if _, _, deny := chain.Run(ctx, in); deny != nil {
			b.Fatalf("denied: %v", deny)
		}
	})
}

// BenchmarkSharedDecoding is the shared decoding of a big result's
// strings on each corpus (cpu-MB/s): what the scans wait for before they
// start, the one of them that makes it and the other.
func BenchmarkSharedDecoding(b *testing.B) {
	for _, name := range corpusNames {
		msg := []byte(toolResult(corpusText(b, name, corpusSize)))
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(msg)))
			b.ReportAllocs()
			reportCPU(b, len(msg), func() {
				ss := &sharedStrings{msg: msg}
				if ss.of(msg) == nil {
					b.Fatal("not shared")
				}
			})
		})
	}
}
