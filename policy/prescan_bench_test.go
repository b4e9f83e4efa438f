package policy

import (
	"context"
	"testing"
)

// BenchmarkResultAfterRead is what the answer to BenchmarkPerfBigResult's
// 10MiB-mixed call waits for once its line is in, with the default set
// (RunAhead: injection, which only audits, is left deciding): "whole"
// decodes and scans it all then, as without a prescan; "prescanned" had
// the pieces before the last (1 MiB each, as a pipe raised for big lines
// gives them) prescanned while they came, and finishes the prescan and
// runs on it. "read" is the prescan's work on those pieces, done while
// the server writes the rest.
func BenchmarkResultAfterRead(b *testing.B) {
	chain := defaultDetectorSet(b)
	result := toolResult(corpusText(b, "mixed", 10<<20))
	line := []byte(`{"jsonrpc":"2.0","id":7,"result":` + result + "}")
	const piece = 1 << 20
	from := len(line) - len(result) - 1
	ctx := context.Background()
	in := toolCall(Result, "")
	in.Message = line[from : len(line)-1]
	run := func() {
		_, _, deny, rest := chain.RunAhead(ctx, in)
		if deny != nil || rest == nil {
			b.Fatalf("denied %v, nothing left deciding: %v", deny, rest == nil)
		}
		b.StopTimer()
		rest()
	}
	prescan := func(to int) *Prescan {
		ps := chain.Prescan(Result)
		for at := piece; at < to; at += piece {
			ps.Advance(line[:at])
		}
		return ps
	}
	b.Run("whole", func(b *testing.B) {
		in.Prescan = nil
		for range b.N {
			b.StartTimer()
			run()
		}
	})
	b.Run("prescanned", func(b *testing.B) {
		for range b.N {
			b.StopTimer()
			in.Prescan = prescan(len(line))
			b.StartTimer()
			if !in.Prescan.Finish(line) {
				b.Fatal("the prescan failed")
			}
			run()
		}
	})
	b.Run("read", func(b *testing.B) {
		reportCPU(b, len(line), func() { prescan(len(line)).Stop() })
	})
}
