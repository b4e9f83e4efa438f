package main

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// clockTick is the unit of utime and stime in /proc/PID/stat: USER_HZ,
// which Linux fixes at 100 on every architecture Go runs on (sysconf
// _SC_CLK_TCK, unreachable without cgo).
const clockTick = 10 * time.Millisecond

// procCPU is the CPU time a process has used, user plus system, all its
// threads (exited ones too) and none of its children. It reads the
// process's CPU clock where the system has one for other processes (Linux:
// processCPUClock), to the nanosecond; elsewhere utime and stime of
// /proc/PID/stat, whose unit is a tick (10 ms): a measure of CPU per call
// then takes a second or more of CPU to be good to 1%. getrusage would be
// finer, but only for the caller or its waited-for children, which for
// mcpgate or the relay include the server they run.
func procCPU(pid int) (time.Duration, error) {
	if cpu, ok := processCPUClock(pid); ok {
		return cpu, nil
	}
	return procStatCPU(pid)
}

// procStatCPU is procCPU from /proc/PID/stat, in ticks.
func procStatCPU(pid int) (time.Duration, error) {
	// utime and stime are fields 14 and 15.
	fields, err := procStatFields(pid, 13)
	if err != nil {
		return 0, err
	}
	var ticks int64
	for _, f := range fields[11:13] {
		n, err := strconv.ParseInt(f, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("/proc/%d/stat: %q is not a number of ticks", pid, f)
		}
		ticks += n
	}
	return time.Duration(ticks) * clockTick, nil
}

// procStatFields is /proc/PID/stat's fields after the command name (field
// 3 on), at least want of them: the name, in parentheses, may hold spaces.
func procStatFields(pid, want int) ([]string, error) {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return nil, err
	}
	end := bytes.LastIndexByte(stat, ')')
	if end < 0 {
		return nil, fmt.Errorf("/proc/%d/stat: no command name", pid)
	}
	fields := strings.Fields(string(stat[end+1:]))
	if len(fields) < want {
		return nil, fmt.Errorf("/proc/%d/stat: %d fields after the name, want %d or more", pid, len(fields), want)
	}
	return fields, nil
}

// procMemory is a memory figure of /proc/PID/status in MiB: VmRSS (resident
// now) or VmHWM (the peak of it).
func procMemory(pid int, field string) (float64, error) {
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for line := range strings.Lines(string(status)) {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			kB, err := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(v), " kB"))
			if err != nil {
				return 0, fmt.Errorf("/proc/%d/status: %s: %q is not kB", pid, field, v)
			}
			return float64(kB) / 1024, nil
		}
	}
	return 0, fmt.Errorf("/proc/%d/status has no %s", pid, field)
}
