package main

import (
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"
)

// The commands the scripts run as separate processes, like real peers:
//
//	mcpgate       the real program
//	fakeupstream  an MCP server driven by a JSON spec (fakeupstream_test.go)
//	mcpclient     a scripted MCP client that starts a command (mcpclient_test.go)
var scriptCommands = map[string]func(){
	"mcpgate":      func() { os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr)) },
	"fakeupstream": func() { os.Exit(fakeUpstreamMain(os.Args[1:])) },
	"mcpclient":    func() { os.Exit(mcpClientMain(os.Args[1:])) },
}

func TestMain(m *testing.M) {
	testscript.Main(m, scriptCommands)
}

func TestScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir:                 "testdata/script",
		RequireExplicitExec: true,
		UpdateScripts:       os.Getenv("UPDATE_SCRIPTS") != "",
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"alive":       cmdAlive,
			"count-lines": cmdCountLines,
			"freeport":    cmdFreePort,
		},
	})
}

// cmdAlive: alive PIDFILE... — succeeds if every process whose pid is in a
// file is still running (with !, if none is). Zombies count as gone.
func cmdAlive(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) == 0 {
		ts.Fatalf("usage: alive PIDFILE...")
	}
	for _, f := range args {
		pid, err := strconv.Atoi(strings.TrimSpace(ts.ReadFile(f)))
		if err != nil {
			ts.Fatalf("%s: no pid: %v", f, err)
		}
		// A process being killed may take a moment to disappear; wait for
		// the expected state rather than sleeping a fixed time.
		deadline := time.Now().Add(10 * time.Second)
		for {
			alive := processAlive(pid)
			if alive != neg {
				break
			}
			if time.Now().After(deadline) {
				ts.Fatalf("process %d (%s): alive=%v, want %v", pid, f, alive, !neg)
			}
			time.Sleep(20 * time.Millisecond)
		}
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
func cmdFreePort(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 1 || neg {
		ts.Fatalf("usage: freeport NAME")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	ts.Check(err)
	ts.Setenv(args[0], fmt.Sprint(ln.Addr().(*net.TCPAddr).Port))
	ln.Close()
}

func processAlive(pid int) bool {
	if err := syscall.Kill(pid, 0); err != nil {
		return false
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true
	}
	fields := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
	return len(fields) == 0 || fields[0] != "Z"
}
