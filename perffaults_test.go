package main

import (
	"strconv"
	"testing"
)

// procMinorFaults is the minor page faults a process has taken, all its
// threads and none of its children (field 10 of /proc/PID/stat): each is a
// page touched for the first time, which in a virtual machine costs more
// than copying the page, so a big message read into fresh memory shows
// here before it shows in the CPU figures.
func procMinorFaults(pid int) (int64, error) {
	fields, err := procStatFields(pid, 8)
	if err != nil {
		return 0, err
	}
	return strconv.ParseInt(fields[7], 10, 64)
}

// faultMeter counts a process's minor page faults over a benchmark's
// timed calls (nothing where /proc is not): a big result read into memory
// the process had already touched takes none, into fresh memory one a
// page (12,800 for 50 MiB).
type faultMeter struct {
	pid   int
	start int64
}

func startFaultMeter(pid int) faultMeter {
	if pid == 0 {
		return faultMeter{}
	}
	start, err := procMinorFaults(pid)
	if err != nil {
		return faultMeter{}
	}
	return faultMeter{pid: pid, start: start}
}

// report reports the faults since the start per operation, as
// hop-minflt/op.
func (m faultMeter) report(b *testing.B, ops int) {
	if m.pid == 0 || ops == 0 {
		return
	}
	if now, err := procMinorFaults(m.pid); err == nil {
		b.ReportMetric(float64(now-m.start)/float64(ops), "hop-minflt/op")
	}
}
