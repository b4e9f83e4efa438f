package main

import (
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
	"runtime/trace"

	"github.com/mcpgate/mcpgate/proxy"
)

// mcpgateProfiledMain is mcpgate writing pprof profiles of its own run, for
// the benchmarks (MCPGATE_PERF_PROFILE, perf_bench_test.go): a CPU profile
// to $MCPGATE_CPUPROFILE and, as it exits, an allocation profile to
// $MCPGATE_MEMPROFILE, and an execution trace to $MCPGATE_TRACE (any may
// be unset; `go tool trace -d=parsed FILE` lists why goroutines parked).
// mcpgate itself has no profiling flag; this is the same program with the
// profiler around it.
//
//	mcpgate-prof [mcpgate's arguments]
//
// A warden it starts runs as mcpgate-prof too (/proc/self/exe, argv[0]
// kept), and is left unprofiled.
func mcpgateProfiledMain(args []string) int {
	if len(args) > 0 && args[0] == proxy.WardenCommand {
		return run(args, os.Stdin, os.Stdout, os.Stderr)
	}
	stopCPUProfile := func() {}
	if path := os.Getenv("MCPGATE_CPUPROFILE"); path != "" {
		f, err := os.Create(path)
		if err == nil {
			err = pprof.StartCPUProfile(f)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "mcpgate-prof: MCPGATE_CPUPROFILE:", err)
			return 1
		}
		stopCPUProfile = func() {
			pprof.StopCPUProfile()
			f.Close()
		}
	}
	if path := os.Getenv("MCPGATE_TRACE"); path != "" {
		f, err := os.Create(path)
		if err == nil {
			err = trace.Start(f)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "mcpgate-prof: MCPGATE_TRACE:", err)
			return 1
		}
		defer f.Close()
		defer trace.Stop()
	}
	code := run(args, os.Stdin, os.Stdout, os.Stderr)
	// Stopped before the collection below: runtime.GC waits for the sweep
	// to end by calling runtime.Gosched in a loop, which the profile showed
	// as a tenth of mcpgate's CPU (gosched_m) though no call paid it.
	stopCPUProfile()
	if path := os.Getenv("MCPGATE_MEMPROFILE"); path != "" {
		runtime.GC() // the allocation profile is complete up to the last GC
		f, err := os.Create(path)
		if err == nil {
			err = pprof.Lookup("allocs").WriteTo(f, 0)
			f.Close()
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "mcpgate-prof: MCPGATE_MEMPROFILE:", err)
		}
	}
	return code
}
