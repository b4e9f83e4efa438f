package main

import (
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/mcpgate/mcpgate/proxy"
)

// The commands the scripts run as separate processes, like real peers:
//
//	mcpgate       the real program
//	fakeupstream  an MCP server driven by a JSON spec (fakeupstream_test.go)
//	mcpclient     a scripted MCP client that starts a command (mcpclient_test.go)
//	relayfloor    a server behind a relay that copies lines: the benchmarks' floor
//	httpfloor     a stdio server behind a minimal HTTP relay: the HTTP benchmark's floor
//	mcpgate-prof  mcpgate writing pprof profiles, for the benchmarks
var scriptCommands = map[string]func(){
	"mcpgate":      func() { os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr)) },
	"fakeupstream": func() { os.Exit(fakeUpstreamMain(os.Args[1:])) },
	"mcpclient":    func() { os.Exit(mcpClientMain(os.Args[1:])) },
	"relayfloor":   func() { os.Exit(relayFloorMain(os.Args[1:])) },
	"httpfloor":    func() { os.Exit(httpFloorMain(os.Args[1:])) },
	"mcpgate-prof": func() { os.Exit(mcpgateProfiledMain(os.Args[1:])) },
	"clusterload":  func() { os.Exit(clusterLoadMain(os.Args[1:])) },
}

// goBuildCache is where the go command keeps its build cache, found before
// TestMain points XDG_CACHE_HOME elsewhere: the interop scripts build Go
// programs.
var goBuildCache = func() string {
	if dir := os.Getenv("GOCACHE"); dir != "" {
		return dir
	}
	if dir, err := os.UserCacheDir(); err == nil {
		return filepath.Join(dir, "go-build")
	}
	return ""
}()

func TestMain(m *testing.M) {
	if strings.HasSuffix(filepath.Base(os.Args[0]), ".test") {
		// The tests and benchmarks that start mcpgate themselves give it
		// this environment: with the user's cache directory, they would
		// write there, and a start after the first would be warm. (A
		// relative XDG_CACHE_HOME is one os.UserCacheDir refuses.)
		os.Setenv("XDG_CACHE_HOME", "no-default-cache-in-tests")
	}
	testscript.Main(m, scriptCommands)
}

// scriptCmds are the commands scripts run in the test process.
var scriptCmds = map[string]func(ts *testscript.TestScript, neg bool, args []string){
	"alive":          cmdAlive,
	"count-lines":    cmdCountLines,
	"freeport":       cmdFreePort,
	"waitfile":       cmdWaitFile,
	"waithttp":       cmdWaitHTTP,
	"waithttp-any":   cmdWaitHTTPAny,
	"touch":          cmdTouch,
	"envfile":        cmdEnvFile,
	"rss-below":      cmdRSSBelow,
	"signal-gateway": cmdSignalGateway,
	"onefile":        cmdOneFile,
	"killpid":        cmdKillPID,
	"perm":           cmdPerm,
	"big-header":     cmdBigHeader,
	"conn-flood":     cmdConnFlood,
}

// TestScriptREADME keeps testdata/script/README.md true: every program and
// command a script can use is described there.
func TestScriptREADME(t *testing.T) {
	readme, err := os.ReadFile("testdata/script/README.md")
	if err != nil {
		t.Fatal(err)
	}
	for name := range scriptCmds {
		if !strings.Contains(string(readme), "- `"+name+" ") && !strings.Contains(string(readme), "- `"+name+"`") {
			t.Errorf("testdata/script/README.md does not describe the command %q", name)
		}
	}
	for name := range scriptCommands {
		if !strings.Contains(string(readme), "- `"+name) {
			t.Errorf("testdata/script/README.md does not describe the program %q", name)
		}
	}
}

func TestScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir:                 "testdata/script",
		RequireExplicitExec: true,
		UpdateScripts:       os.Getenv("UPDATE_SCRIPTS") != "",
		Setup: func(e *testscript.Env) error {
			// A race-enabled program sleeps a second as it exits (so other
			// goroutines may report races): the scripts start hundreds.
			// Races are still reported, and exit with status 66.
			e.Setenv("GORACE", strings.TrimSpace(os.Getenv("GORACE")+" atexit_sleep_ms=0"))
			// No discovery cache unless a script says where (cache_dir): the
			// user's cache directory would be $HOME/.cache, outside the
			// script, shared by every script. A relative XDG_CACHE_HOME is
			// one os.UserCacheDir refuses.
			e.Setenv("XDG_CACHE_HOME", "no-default-cache-in-scripts")
			if os.Getenv("MCPGATE_INTEROP") == "1" {
				// npm needs the user's home (its config, certificates, proxy).
				for _, k := range []string{"HOME", "NODE_EXTRA_CA_CERTS", "SSL_CERT_FILE", "HTTPS_PROXY", "HTTP_PROXY", "NO_PROXY", "https_proxy", "http_proxy", "no_proxy"} {
					if v, ok := os.LookupEnv(k); ok {
						e.Setenv(k, v)
					}
				}
				// The go command finds no build cache under the relative
				// XDG_CACHE_HOME above.
				if goBuildCache != "" {
					e.Setenv("GOCACHE", goBuildCache)
				}
			}
			return nil
		},
		// [interop]: the optional scripts against real Node.js peers run only
		// when asked for; the required suite needs no network and no Node.js.
		// [race]: the race detector is on (memory limits must allow for it).
		Condition: func(cond string) (bool, error) {
			if cond == "race" {
				return raceEnabled, nil
			}
			if n, ok := strings.CutPrefix(cond, "fds:"); ok {
				// A script that holds thousands of connections open
				// needs as many descriptors: [!fds:9000] skip.
				need, err := strconv.ParseUint(n, 10, 64)
				return err == nil && fdLimit() >= need, err
			}
			if cond == "nginx" {
				// Replicas behind a real nginx: only when asked for (it
				// needs nginx installed, and starts it on loopback ports).
				_, err := exec.LookPath("nginx")
				return os.Getenv("MCPGATE_NGINX") == "1" && err == nil, nil
			}
			if cond != "interop" {
				return false, fmt.Errorf("unknown condition %q", cond)
			}
			_, err := exec.LookPath("npm")
			return os.Getenv("MCPGATE_INTEROP") == "1" && err == nil, nil
		},
		Cmds: scriptCmds,
	})
}

// cmdAlive: alive PIDFILE... — succeeds if every process whose pid is in a
// file (one or more, a line each) is still running (with !, if none is).
// Zombies count as gone.
func cmdAlive(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) == 0 {
		ts.Fatalf("usage: alive PIDFILE...")
	}
	var pids []int
	for _, f := range args {
		fields := strings.Fields(pidsWritten(ts, f))
		if len(fields) == 0 {
			ts.Fatalf("%s: no pid", f)
		}
		for _, field := range fields {
			pid, err := strconv.Atoi(field)
			if err != nil {
				ts.Fatalf("%s: not a pid: %q", f, field)
			}
			pids = append(pids, pid)
		}
	}
	for _, pid := range pids {
		// A process being killed may take a moment to disappear; wait for
		// the expected state rather than sleeping a fixed time.
		deadline := time.Now().Add(10 * time.Second)
		for {
			alive := processAlive(pid)
			if alive != neg {
				break
			}
			if time.Now().After(deadline) {
				ts.Fatalf("process %d: alive=%v, want %v", pid, alive, !neg)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
}

// pidsWritten is what file holds, once it holds anything: a pid file
// waited for with waitfile exists from the moment the server creates it,
// before it writes its pid (one write).
func pidsWritten(ts *testscript.TestScript, file string) string {
	deadline := time.Now().Add(10 * time.Second)
	for {
		text := ts.ReadFile(file)
		if strings.TrimSpace(text) != "" || time.Now().After(deadline) {
			return text
		}
		time.Sleep(10 * time.Millisecond) // polling for a write by another process
	}
}

// cmdCountLines: count-lines FILE — prints how many lines FILE has.
func cmdCountLines(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 1 || neg {
		ts.Fatalf("usage: count-lines FILE")
	}
	fmt.Fprintln(ts.Stdout(), strings.Count(ts.ReadFile(args[0]), "\n"))
}

// cmdFreePort: freeport NAME — sets $NAME to a free TCP port on loopback.
// Scripts run in parallel, and a port just closed may be handed out again:
// no port is given to two scripts.
func cmdFreePort(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 1 || neg {
		ts.Fatalf("usage: freeport NAME")
	}
	for {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		ts.Check(err)
		port := ln.Addr().(*net.TCPAddr).Port
		ln.Close()
		givenPorts.Lock()
		taken := givenPorts.m[port]
		givenPorts.m[port] = true
		givenPorts.Unlock()
		if !taken {
			ts.Setenv(args[0], fmt.Sprint(port))
			return
		}
	}
}

var givenPorts = struct {
	sync.Mutex
	m map[int]bool
}{m: map[int]bool{}}

// cmdWaitFile: waitfile FILE — waits (up to 60s) for FILE to exist: the
// event a background client signals with its "write" line.
func cmdWaitFile(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 1 || neg {
		ts.Fatalf("usage: waitfile FILE")
	}
	waitFor(ts, "file "+args[0], func() bool {
		_, err := os.Stat(ts.MkAbs(args[0]))
		return err == nil
	})
}

// cmdWaitHTTP: waithttp URL — waits (up to 60s) for URL to answer 200;
// with !, for it to stop answering 200 (another status, or no answer).
func cmdWaitHTTP(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 1 {
		ts.Fatalf("usage: [!] waithttp URL")
	}
	waitFor(ts, args[0], func() bool {
		resp, err := http.Get(args[0])
		if err != nil {
			return neg
		}
		resp.Body.Close()
		return (resp.StatusCode == http.StatusOK) != neg
	})
}

// cmdWaitHTTPAny: waithttp-any URL — waits (up to 60s) for anything to
// answer at URL, whatever the status.
func cmdWaitHTTPAny(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 1 || neg {
		ts.Fatalf("usage: waithttp-any URL")
	}
	waitFor(ts, args[0], func() bool {
		resp, err := http.Get(args[0])
		if err == nil {
			resp.Body.Close()
		}
		return err == nil
	})
}

// cmdEnvFile: envfile NAME FILE — sets $NAME to FILE's content (a URL a
// background server wrote).
func cmdEnvFile(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 2 || neg {
		ts.Fatalf("usage: envfile NAME FILE")
	}
	ts.Setenv(args[0], strings.TrimSpace(ts.ReadFile(args[1])))
}

// cmdTouch: touch FILE — creates FILE, empty.
func cmdTouch(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 1 || neg {
		ts.Fatalf("usage: touch FILE")
	}
	ts.Check(os.WriteFile(ts.MkAbs(args[0]), nil, 0o644))
}

// cmdOneFile: onefile NAME PATTERN — sets $NAME to the one file that
// matches the glob PATTERN (a file whose name the script cannot know, such
// as a discovery cache file named by a hash); fails unless exactly one does.
func cmdOneFile(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 2 || neg {
		ts.Fatalf("usage: onefile NAME PATTERN")
	}
	matches, err := filepath.Glob(ts.MkAbs(args[1]))
	ts.Check(err)
	if len(matches) != 1 {
		ts.Fatalf("%s: %d files match, not one: %v", args[1], len(matches), matches)
	}
	ts.Setenv(args[0], matches[0])
}

// cmdKillPID: killpid PIDFILE — sends SIGKILL to the process whose pid is in
// PIDFILE, waiting (up to 60s) for the file to hold one: a server that
// dies at a moment the script chooses.
func cmdKillPID(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 1 || neg {
		ts.Fatalf("usage: killpid PIDFILE")
	}
	var pid int
	waitFor(ts, "a pid in "+args[0], func() bool {
		data, err := os.ReadFile(ts.MkAbs(args[0]))
		if err != nil {
			return false
		}
		pid, err = strconv.Atoi(strings.TrimSpace(string(data)))
		return err == nil && pid > 0
	})
	server, err := os.FindProcess(pid)
	ts.Check(err)
	ts.Check(server.Kill())
}

// cmdPerm: perm PATH MODE — succeeds if PATH's permission bits are MODE
// (octal, such as 0600); with !, if they are not.
func cmdPerm(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 2 {
		ts.Fatalf("usage: perm PATH MODE")
	}
	want, err := strconv.ParseUint(args[1], 8, 32)
	ts.Check(err)
	fi, err := os.Lstat(ts.MkAbs(args[0]))
	ts.Check(err)
	if got := fi.Mode().Perm(); (got == os.FileMode(want)) == neg {
		ts.Fatalf("%s: mode %#o, want %s%#o", args[0], got, map[bool]string{true: "not ", false: ""}[neg], want)
	}
}

// waitFor polls cond until it holds, failing the script after 60s: waiting
// for an event, with a generous limit, never a fixed sleep.
func waitFor(ts *testscript.TestScript, what string, cond func() bool) {
	deadline := time.Now().Add(60 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			ts.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func processAlive(pid int) bool {
	if !processExists(pid) {
		return false
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true
	}
	fields := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
	return len(fields) == 0 || fields[0] != "Z"
}

// cmdRSSBelow: rss-below [-gateway] [-peak] PIDFILE MiB — succeeds if the
// resident memory of the process in PIDFILE is below MiB (Linux:
// /proc/PID/status). -gateway: of the mcpgate that runs the upstream in
// PIDFILE (its nearest ancestor that is not a warden); -peak: the peak
// (VmHWM) rather than the current (VmRSS).
func cmdRSSBelow(ts *testscript.TestScript, neg bool, args []string) {
	gateway, peak := false, false
	for len(args) > 0 && strings.HasPrefix(args[0], "-") {
		switch args[0] {
		case "-gateway":
			gateway = true
		case "-peak":
			peak = true
		default:
			ts.Fatalf("rss-below: unknown flag %s", args[0])
		}
		args = args[1:]
	}
	if len(args) != 2 || neg {
		ts.Fatalf("usage: rss-below [-gateway] [-peak] PIDFILE MiB")
	}
	limit, err := strconv.Atoi(args[1])
	ts.Check(err)
	pid := strings.TrimSpace(ts.ReadFile(args[0]))
	status := func(pid, field string) string {
		b, err := os.ReadFile("/proc/" + pid + "/status")
		ts.Check(err)
		for line := range strings.Lines(string(b)) {
			if v, ok := strings.CutPrefix(line, field+":"); ok {
				return strings.TrimSpace(v)
			}
		}
		ts.Fatalf("/proc/%s/status has no %s", pid, field)
		return ""
	}
	if gateway {
		for {
			pid = status(pid, "PPid")
			cmdline, err := os.ReadFile("/proc/" + pid + "/cmdline")
			ts.Check(err)
			if !strings.Contains(string(cmdline), "\x00"+proxy.WardenCommand+"\x00") {
				break
			}
		}
	}
	field := "VmRSS"
	if peak {
		field = "VmHWM"
	}
	kB, err := strconv.Atoi(strings.TrimSuffix(status(pid, field), " kB"))
	ts.Check(err)
	fmt.Fprintf(ts.Stdout(), "%s of %s: %d MiB\n", field, pid, kB>>10)
	if kB>>10 >= limit {
		ts.Fatalf("process %s holds %d MiB (%s), want below %d MiB", pid, kB>>10, field, limit)
	}
}
