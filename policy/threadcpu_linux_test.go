package policy

import (
	"runtime"
	"syscall"
	"testing"
	"time"
)

// threadCPU returns the CPU time (user and system) of the calling thread.
func threadCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_THREAD, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// reportCPU runs loop on one thread and reports its CPU time per
// iteration and the bytes it scanned per CPU second ("cpu-MB/s"): on a
// machine other work keeps busy, wall time measures the others as much as
// the code, and CPU time much less so.
func reportCPU(b *testing.B, bytes int, loop func()) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	start := threadCPU()
	n := 0
	for b.Loop() {
		loop()
		n++
	}
	cpu := threadCPU() - start
	if cpu > 0 && n > 0 {
		b.ReportMetric(float64(cpu.Nanoseconds())/float64(n), "cpu-ns/op")
		b.ReportMetric(float64(bytes)*float64(n)/cpu.Seconds()/1e6, "cpu-MB/s")
	}
}
