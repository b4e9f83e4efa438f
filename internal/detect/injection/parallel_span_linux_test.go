package injection

import (
	"runtime"
	"slices"
	"syscall"
	"testing"
	"time"
)

func threadCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_THREAD, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkScanMixed10MiBSpan measures, in CPU time of one thread (which
// other work on a busy machine changes far less than wall time), the whole
// walk of 10 MiB of the mixed corpus and each of its pieces: "span-ns" is
// how long two cores taking the pieces in turn take (list scheduling, as
// scanInPieces' workers do), "cpu-ns" all the pieces' CPU, "whole-ns" the
// whole walk's.
func BenchmarkScanMixed10MiBSpan(b *testing.B) {
	d := Default()
	text := realisticText(b, "mixed", 10<<20)
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	s := new(scanner)
	var whole, all, span time.Duration
	n := 0
	for b.Loop() {
		t0 := threadCPU()
		d.scan(s, text)
		whole += threadCPU() - t0
		pieces := splitText(text, piecesPerCore*2, pieceMin)
		var cores [2]time.Duration
		for k := range pieces {
			t0 := threadCPU()
			if !d.scanPiece(s, text, &pieces[k]) {
				b.Fatal("a piece could not tell")
			}
			took := threadCPU() - t0
			all += took
			cores[slices.Index(cores[:], slices.Min(cores[:]))] += took
		}
		span += slices.Max(cores[:])
		n++
	}
	b.ReportMetric(float64(whole.Nanoseconds())/float64(n), "whole-ns")
	b.ReportMetric(float64(all.Nanoseconds())/float64(n), "cpu-ns")
	b.ReportMetric(float64(span.Nanoseconds())/float64(n), "span-ns")
}
