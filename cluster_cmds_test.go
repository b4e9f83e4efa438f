package main

import (
	"os"
	"strconv"
	"strings"
	"syscall"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/mcpgate/mcpgate/proxy"
)

// cmdSignalGateway: signal-gateway TERM|INT|KILL PIDFILE — sends the signal
// to the mcpgate that runs the upstream whose pid is in PIDFILE (testscript's
// kill knows no SIGTERM, and a background command's pid is not shown): how
// a load balancer's orchestrator stops a replica.
func cmdSignalGateway(ts *testscript.TestScript, neg bool, args []string) {
	signals := map[string]syscall.Signal{"TERM": syscall.SIGTERM, "INT": syscall.SIGINT, "KILL": syscall.SIGKILL}
	if len(args) != 2 || neg || signals[args[0]] == 0 {
		ts.Fatalf("usage: signal-gateway TERM|INT|KILL PIDFILE")
	}
	pid, err := strconv.Atoi(gatewayPID(ts, strings.TrimSpace(ts.ReadFile(args[1]))))
	ts.Check(err)
	gateway, err := os.FindProcess(pid)
	ts.Check(err)
	ts.Check(gateway.Signal(signals[args[0]]))
}

// gatewayPID is the pid of the mcpgate that runs the upstream process pid:
// its nearest ancestor that is not a warden (Linux: /proc).
func gatewayPID(ts *testscript.TestScript, pid string) string {
	for {
		pid = procStatus(ts, pid, "PPid")
		cmdline, err := os.ReadFile("/proc/" + pid + "/cmdline")
		ts.Check(err)
		if !strings.Contains(string(cmdline), "\x00"+proxy.WardenCommand+"\x00") {
			return pid
		}
	}
}

// procStatus reads one field of /proc/PID/status.
func procStatus(ts *testscript.TestScript, pid, field string) string {
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
