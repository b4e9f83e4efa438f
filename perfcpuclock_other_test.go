//go:build !linux

package main

import "time"

// processCPUClock: no CPU clock of another process here; procCPU counts
// /proc/PID/stat's ticks where there is a /proc.
func processCPUClock(int) (time.Duration, bool) { return 0, false }
