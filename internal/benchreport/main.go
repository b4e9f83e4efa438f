// Command benchreport runs mcpgate's performance suite, the BenchmarkPerf*
// benchmarks of the repository's root package (perf_bench_test.go), and
// prints issue 13's table: mcpgate beside a direct connection to the same
// server and beside a relay that only copies lines, measured in one run.
//
//	go run ./internal/benchreport [-rounds 3] [-quick] [-only REGEXP] [-v] [-raw FILE]
//	go run ./internal/benchreport -profile DIR
//
// It builds the test binary and the real mcpgate once, then runs the
// benchmarks in rounds: each round runs every group once (the C=1 groups
// five times), each group running its peers one after the other (direct,
// relay, mcpgate, mcpgate with its default policies), so that the peers of
// a row alternate and a burst of load elsewhere falls on all of them; the
// throughput and CPU at C=16 and 64 run their peers in turns within one
// benchmark (BenchmarkPerfCallTurns), for the same reason at a finer
// grain. Each cell is the median of its runs. The machine, and how busy it
// was with other work meanwhile, head the output.
//
// -profile DIR runs instead the hot paths (stdio tools/call at C=16, the
// 5,020-tool list, the 10 MiB result, the HTTP front at C=64) with mcpgate
// writing CPU and allocation profiles into DIR (see mcpgateProfiledMain),
// and says how to read them.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"
)

// group is one run of the test binary: the benchmarks a pattern selects,
// each run as -benchtime says. Counts ("4000x") keep samples equal across
// peers; a duration suits the benchmarks whose peers differ tenfold.
// repeat runs the group that many times a round (0: once): the latency of
// one call at a time settles, for a process's whole life, in one of two or
// three modes (which core each process of the chain wakes on), so one run
// is one draw of them, and the median needs many draws.
type group struct {
	pattern   string
	benchtime string
	repeat    int
}

var groups = []group{
	{`^BenchmarkPerfCall$/^C=1$`, "2000x", 5},
	// Throughput and CPU at C=16 and 64: the peers in turns, under the
	// same load (BenchmarkPerfCallTurns). 100,000 calls each: a second or
	// more of every peer's, and without Linux's CPU clock of a process
	// the relay's CPU is still 40 ticks or more of /proc/PID/stat (see
	// procCPU).
	{`^BenchmarkPerfCallTurns$/^C=(16|64)$`, "100000x", 0},
	{`^BenchmarkPerfList5020$`, "2s", 0},
	{`^BenchmarkPerfFanout$`, "20x", 0},
	{`^BenchmarkPerfBigResult$/^1MiB$`, "1s", 0},
	{`^BenchmarkPerfBigResult$/^10MiB$`, "10x", 0},
	{`^BenchmarkPerfBigResult$/^10MiB-mixed$`, "10x", 0},
	{`^BenchmarkPerfBigResult$/^50MiB$`, "3x", 0},
	{`^BenchmarkPerfHTTP$/^C=1$`, "2000x", 5},
	{`^BenchmarkPerfCallTurns$/^HTTP-C=64$`, "40000x", 0},
	{`^BenchmarkPerfHTTPBigResult$/^1MiB$`, "1s", 0},
	{`^BenchmarkPerfHTTPBigResult$/^10MiB$`, "10x", 0},
	{`^BenchmarkPerfHTTPBigResult$/^50MiB$`, "3x", 0},
	{`^BenchmarkPerfColdStart$`, "10x", 0},
}

// onlyGroups selects the groups that run (-only); it matches every one by
// default.
var onlyGroups = regexp.MustCompile("")

// profileGroups give each profile some seconds of mcpgate's CPU: a
// thousand samples or more.
var profileGroups = []group{
	{`^BenchmarkPerfCall$/^C=16$/^mcpgate$`, "300000x", 0},
	{`^BenchmarkPerfCall$/^C=16$/^mcpgate-policies$`, "100000x", 0},
	{`^BenchmarkPerfList5020$/^mcpgate(-cached)?$`, "300x", 0},
	{`^BenchmarkPerfList5020$/^mcpgate-policies$`, "40x", 0},
	{`^BenchmarkPerfBigResult$/^10MiB$/^mcpgate$`, "30x", 0},
	{`^BenchmarkPerfHTTP$/^C=64$/^mcpgate$`, "100000x", 0},
}

func main() {
	rounds := flag.Int("rounds", 3, "how many times to run the suite; each cell is the median")
	quick := flag.Bool("quick", false, "one round, each benchmark once (-benchtime 1x): check that it works")
	verbose := flag.Bool("v", false, "copy the benchmarks' output to stderr")
	profile := flag.String("profile", "", "write mcpgate's CPU and allocation profiles of the hot paths to `dir` instead")
	rawPath := flag.String("raw", "", "also write the benchmarks' own output to `file`")
	only := flag.String("only", "", "run only the groups whose benchmark pattern matches `regexp` (HTTP, Call, BigResult, ...) and show only their rows")
	flag.Parse()
	var err error
	if onlyGroups, err = regexp.Compile(*only); err != nil {
		fmt.Fprintln(os.Stderr, "benchreport: -only:", err)
		os.Exit(2)
	}
	var raw io.Writer // nil: not kept
	if *rawPath != "" {
		f, err := os.Create(*rawPath)
		if err != nil {
			fmt.Fprintln(os.Stderr, "benchreport:", err)
			os.Exit(1)
		}
		defer f.Close()
		raw = f
	}
	if err := run(*rounds, *quick, *verbose, *profile, raw); err != nil {
		fmt.Fprintln(os.Stderr, "benchreport:", err)
		os.Exit(1)
	}
}

func run(rounds int, quick, verbose bool, profileDir string, raw io.Writer) error {
	root, err := moduleRoot()
	if err != nil {
		return err
	}
	tmp, err := os.MkdirTemp("", "benchreport")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	testBinary, gateBinary := filepath.Join(tmp, "perf.test"), filepath.Join(tmp, "mcpgate")
	fmt.Fprintln(os.Stderr, "building the test binary and mcpgate…")
	if err := goCommand(root, "test", "-c", "-o", testBinary, ".").Run(); err != nil {
		return fmt.Errorf("go test -c: %w", err)
	}
	// mcpgate is built as deploy/ builds it for release: static (no libc
	// mapped in: about 1.3 MB less resident), without paths or symbols.
	build := goCommand(root, "build", "-trimpath", "-ldflags=-s -w", "-o", gateBinary, ".")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if err := build.Run(); err != nil {
		return fmt.Errorf("go build: %w", err)
	}
	if profileDir != "" {
		return runProfiles(root, testBinary, profileDir, verbose)
	}
	if quick {
		rounds = 1
	}
	machine := describeMachine(root)
	before := sampleLoad()
	res := results{}
	for round := 1; round <= rounds; round++ {
		for _, g := range groups {
			if !onlyGroups.MatchString(g.pattern) {
				continue
			}
			benchtime, repeat := g.benchtime, max(1, g.repeat)
			if quick {
				benchtime, repeat = "1x", 1
			}
			for range repeat {
				fmt.Fprintf(os.Stderr, "round %d/%d: %s (-benchtime %s)\n", round, rounds, g.pattern, benchtime)
				out, err := runBenchmarks(root, testBinary, g.pattern, benchtime, []string{"MCPGATE_PERF_BIN=" + gateBinary}, verbose)
				if err != nil {
					return err
				}
				if raw != nil {
					raw.Write(out)
				}
				res.add(bytes.NewReader(out))
			}
		}
	}
	load := sampleLoad().since(before)
	fmt.Printf("- Machine: %s.\n", machine)
	fmt.Printf("- Load: %s.\n", load)
	how := fmt.Sprintf("%d rounds (the C=1 paths: 5 runs a round)", rounds)
	if quick {
		how = "-quick: each benchmark once"
	}
	command := "go run ./internal/benchreport"
	if onlyGroups.String() != "" {
		command += " -only " + onlyGroups.String()
	}
	fmt.Printf("- Run: `%s`, %s, each cell the median; %s.\n\n", command, how, time.Now().UTC().Format("2006-01-02"))
	rows := suite()
	if onlyGroups.String() != "" {
		rows = slices.DeleteFunc(rows, func(r row) bool { return !r.ranIn(res) })
	}
	writeTable(os.Stdout, rows, res)
	return nil
}

// runProfiles runs the hot paths with mcpgate profiled.
func runProfiles(root, testBinary, dir string, verbose bool) error {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for _, g := range profileGroups {
		fmt.Fprintf(os.Stderr, "profiling %s (-benchtime %s)\n", g.pattern, g.benchtime)
		if _, err := runBenchmarks(root, testBinary, g.pattern, g.benchtime, []string{"MCPGATE_PERF_PROFILE=" + dir}, verbose); err != nil {
			return err
		}
	}
	profiles, _ := filepath.Glob(filepath.Join(dir, "*.pprof"))
	fmt.Println("Profiles of mcpgate (the last run of each benchmark):")
	for _, p := range profiles {
		fmt.Println("  " + p)
	}
	fmt.Println("Read them with: go tool pprof -top -cum FILE (or -list FUNC, -http :8080); allocation profiles with -sample_index alloc_space")
	return nil
}

// runBenchmarks runs the test binary for pattern and returns its output.
func runBenchmarks(root, testBinary, pattern, benchtime string, env []string, verbose bool) ([]byte, error) {
	cmd := exec.Command(testBinary, "-test.run", "^$", "-test.bench", pattern, "-test.benchtime", benchtime, "-test.count", "1")
	cmd.Dir = root
	cmd.Env = append(os.Environ(), env...)
	var out bytes.Buffer
	cmd.Stdout = &out
	if verbose {
		cmd.Stdout = io.MultiWriter(&out, os.Stderr)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Run(); err != nil {
		os.Stderr.Write(out.Bytes())
		return nil, fmt.Errorf("benchmarks %s: %w", pattern, err)
	}
	return out.Bytes(), nil
}

func goCommand(dir string, args ...string) *exec.Cmd {
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	return cmd
}

// moduleRoot is the directory of mcpgate's go.mod.
func moduleRoot() (string, error) {
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOMOD: %w", err)
	}
	gomod := strings.TrimSpace(string(out))
	if gomod == "" || gomod == os.DevNull {
		return "", fmt.Errorf("not inside mcpgate's module: run it from the repository (go run ./internal/benchreport)")
	}
	return filepath.Dir(gomod), nil
}
