package main

import (
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"time"
)

// describeMachine says what the suite runs on: CPU, cores, GOMAXPROCS,
// memory, kernel and Go. Figures /proc does not give are left out.
func describeMachine(root string) string {
	var parts []string
	if model := procField("/proc/cpuinfo", "model name"); model != "" {
		parts = append(parts, model)
	}
	procs := fmt.Sprintf("%d CPUs", runtime.NumCPU())
	if env := os.Getenv("GOMAXPROCS"); env != "" {
		procs += fmt.Sprintf(" (GOMAXPROCS=%s set: the figures are for that many)", env)
	} else {
		procs += " (GOMAXPROCS as many)"
	}
	parts = append(parts, procs)
	if mem := procField("/proc/meminfo", "MemTotal"); mem != "" {
		if kB, err := strconv.Atoi(strings.TrimSuffix(mem, " kB")); err == nil {
			parts = append(parts, fmt.Sprintf("%.0f GiB", float64(kB)/(1<<20)))
		}
	}
	if release, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		parts = append(parts, runtime.GOOS+" "+strings.TrimSpace(string(release)))
	} else {
		parts = append(parts, runtime.GOOS)
	}
	cmd := exec.Command("go", "env", "GOVERSION")
	cmd.Dir = root
	if v, err := cmd.Output(); err == nil {
		parts = append(parts, strings.TrimSpace(string(v)))
	}
	return strings.Join(parts, ", ")
}

// procField is the value of the first "key: value" line of a /proc file.
func procField(path, key string) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	for line := range strings.Lines(string(data)) {
		k, v, ok := strings.Cut(line, ":")
		if ok && strings.TrimSpace(k) == key {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

// loadSample is the machine's CPU counters at one moment, and our own.
type loadSample struct {
	at       time.Time
	loadavg  string        // the 1-minute load average
	busy     float64       // seconds all CPUs spent on anything (/proc/stat), steal excluded
	steal    float64       // seconds the hypervisor gave to other guests
	total    float64       // seconds in all, idle included
	ours     time.Duration // CPU of our waited-for children: every process of the suite
	haveStat bool
}

// sampleLoad reads /proc/stat's first line (in USER_HZ ticks, 100 a second
// on Linux) and the CPU that the suite's processes used: each is waited
// for by its parent, up to the test binary that we wait for, so their
// time adds up in our children's usage.
func sampleLoad() loadSample {
	s := loadSample{at: time.Now(), ours: childrenCPU()}
	if avg, err := os.ReadFile("/proc/loadavg"); err == nil {
		s.loadavg = strings.Fields(string(avg))[0]
	}
	stat, err := os.ReadFile("/proc/stat")
	if err != nil {
		return s
	}
	line, _, _ := strings.Cut(string(stat), "\n")
	fields := strings.Fields(line)
	if len(fields) < 9 || fields[0] != "cpu" {
		return s
	}
	// user nice system idle iowait irq softirq steal (guest time is
	// already in user).
	var ticks [8]float64
	for i := range ticks {
		ticks[i], _ = strconv.ParseFloat(fields[i+1], 64)
	}
	const hz = 100
	s.busy = (ticks[0] + ticks[1] + ticks[2] + ticks[5] + ticks[6]) / hz
	s.steal = ticks[7] / hz
	for _, t := range ticks {
		s.total += t / hz
	}
	s.haveStat = true
	return s
}

// loadReport is how busy the machine was with other work during a run.
type loadReport struct {
	wall                    time.Duration
	othersShare, stealShare float64 // of all the CPUs' time
	loadBefore, loadAfter   string
	known                   bool
}

func (after loadSample) since(before loadSample) loadReport {
	r := loadReport{wall: after.at.Sub(before.at), loadBefore: before.loadavg, loadAfter: after.loadavg}
	if !before.haveStat || !after.haveStat || after.total <= before.total {
		return r
	}
	total := after.total - before.total
	others := (after.busy - before.busy) - (after.ours - before.ours).Seconds()
	r.othersShare = max(0, others/total)
	r.stealShare = (after.steal - before.steal) / total
	r.known = true
	return r
}

func (r loadReport) String() string {
	s := fmt.Sprintf("the suite ran %s", r.wall.Round(time.Second))
	if r.known {
		s += fmt.Sprintf("; meanwhile other processes used %.0f%% of the CPUs' time and the hypervisor took %.0f%% (steal)", 100*r.othersShare, 100*r.stealShare)
	}
	if r.loadBefore != "" {
		s += fmt.Sprintf("; load average %s before, %s after", r.loadBefore, r.loadAfter)
	}
	return s
}
