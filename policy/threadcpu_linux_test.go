package policy

import (
	"runtime"
	"syscall"
	"testing"
	"time"
)

// threadCPU returns the CPU time (user and system) of the calling thread.
func threadCPU() time.Duration { return rusage(syscall.RUSAGE_THREAD) }

// processCPU returns the CPU time of the process: every goroutine's, the
// collector's too.
func processCPU() time.Duration { return rusage(syscall.RUSAGE_SELF) }

func rusage(who int) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(who, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// reportCPU runs loop on one thread and reports its CPU time per
// iteration and the bytes it scanned per CPU second ("cpu-MB/s"): on a
// machine other work keeps busy, wall time measures the others as much as
// the code, and CPU time much less so. "proc-cpu-ns/op" is the whole
// process's, for work that loop hands to other goroutines.
func reportCPU(b *testing.B, bytes int, loop func()) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	start, procStart := threadCPU(), processCPU()
	n := 0
	for b.Loop() {
		loop()
		n++
	}
	cpu, proc := threadCPU()-start, processCPU()-procStart
	if cpu > 0 && n > 0 {
		b.ReportMetric(float64(proc.Nanoseconds())/float64(n), "proc-cpu-ns/op")
		b.ReportMetric(float64(cpu.Nanoseconds())/float64(n), "cpu-ns/op")
		b.ReportMetric(float64(bytes)*float64(n)/cpu.Seconds()/1e6, "cpu-MB/s")
	}
}
