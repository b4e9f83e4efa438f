package proxy

// A warden stands between the gateway and one stdio server, on Linux:
//
//	mcpgate ── mcpgate __warden ── server ── what the server starts
//
// It does what the gateway cannot do for itself. It is a child subreaper
// (PR_SET_CHILD_SUBREAPER), so whatever the server starts stays its
// descendant, even after leaving the server's process group with setsid,
// and it can find and end all of it. It has a parent-death signal, so that
// when mcpgate is killed with SIGKILL the server is still stopped as
// mcpgate would have stopped it.
//
// The server gets the warden's stdin, stdout and stderr themselves (no
// copying hop), and the warden points its own at /dev/null, so that EOF on
// each still comes when the server's side is done with it.
//
// What passes between the gateway and a warden:
//   - its arguments: PARENT_PID GRACE PATH ARG0 [ARG...], after WardenCommand;
//   - file descriptor 3: it writes wardenStarted, or why the server did not
//     start, and closes it;
//   - SIGTERM: SIGTERM the server's process group and everything else the
//     server started; SIGKILL all of it after GRACE. A second SIGTERM: SIGKILL
//     it now;
//   - SIGHUP, its parent-death signal: mcpgate is gone, so the server's stdin
//     has closed; after GRACE, go on as on SIGTERM;
//   - its exit: once the server has exited, whatever is left is killed and
//     reaped, and the warden exits as the server did, with its status or
//     killed by its signal, so that the gateway reports what it would have
//     without a warden.

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unsafe"
)

// wardenCommand returns the command that starts server under a warden,
// and how to stop it through the warden.
func wardenCommand(server *exec.Cmd, grace time.Duration) (*exec.Cmd, stopSignals) {
	if _, err := os.Stat("/proc/self/exe"); err != nil {
		return nil, nil // no /proc (a bare container): no warden, which needs it too
	}
	// /proc/self/exe rather than os.Executable: the very program running,
	// even if its file has since been replaced by an upgrade. Its first
	// argument is kept: some programs choose what to run by it.
	args := append([]string{os.Args[0], WardenCommand, strconv.Itoa(os.Getpid()), grace.String(), server.Path}, server.Args...)
	cmd := &exec.Cmd{Path: "/proc/self/exe", Args: args, Dir: server.Dir, Env: server.Env}
	// A group of its own, so that a Ctrl-C meant for mcpgate does not reach
	// it; SIGHUP when mcpgate dies. (Go checks, between fork and exec, that
	// mcpgate did not die before the signal was set.)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGHUP}
	return cmd, wardenSignals{cmd}
}

// wardenSignals stop a server through its warden, which reaches whatever
// the server started, and kills and reaps it all before it exits.
type wardenSignals struct{ warden *exec.Cmd }

func (w wardenSignals) terminate() { w.warden.Process.Signal(syscall.SIGTERM) }

// kill asks again: the warden then kills at once.
func (w wardenSignals) kill() { w.warden.Process.Signal(syscall.SIGTERM) }

// force kills a warden that did not do its job: the server then gets its
// parent-death signal.
func (w wardenSignals) force() { w.warden.Process.Kill() }

func (w wardenSignals) cleanup() {}

// RunWarden runs this process as a stdio server's warden (see the top of
// this file); args are those after WardenCommand. It returns the exit code,
// or does not return when the server was killed by a signal.
func RunWarden(args []string) int {
	// The server's parent-death signal fires when the thread that started it
	// ends, not the process (golang.org/issue/27505): start it from a
	// thread that lives as long as the warden.
	runtime.LockOSThread()
	syscall.CloseOnExec(3)
	status := os.NewFile(3, "warden status")
	w, err := parseWardenArgs(args)
	if err != nil {
		fmt.Fprint(status, err)
		return 2
	}
	signals := make(chan os.Signal, 16)
	signal.Notify(signals, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGCHLD)
	if os.Getppid() != w.parent {
		fmt.Fprint(status, "mcpgate has exited")
		return 1
	}
	const prSetChildSubreaper = 36
	if _, _, errno := syscall.RawSyscall(syscall.SYS_PRCTL, prSetChildSubreaper, 1, 0); errno != 0 {
		// Still worth running: it stops the server if mcpgate dies. Said on
		// the server's stderr, which mcpgate logs.
		fmt.Fprintf(os.Stderr, "mcpgate: this server's warden cannot be a subreaper (%v): a process the server starts that leaves its process group may outlive mcpgate\n", errno)
	}
	server := &exec.Cmd{
		Path: w.path, Args: w.argv,
		Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr,
		// The server's own group, as without a warden; and if the warden
		// is killed, the server goes with it.
		SysProcAttr: &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL},
	}
	if err := server.Start(); err != nil {
		fmt.Fprint(status, unwrapExec(err))
		return 1
	}
	w.server = server.Process.Pid
	if err := detachStdio(); err != nil {
		fmt.Fprintf(status, "its warden cannot let go of the server's stdio: %v", err)
		syscall.Kill(-w.server, syscall.SIGKILL)
		return 1
	}
	status.WriteString(wardenStarted)
	status.Close()
	return w.watch(signals)
}

// warden is the state of one warden process.
type warden struct {
	parent int           // mcpgate's pid
	grace  time.Duration // each step of stopping the server
	path   string        // the server's program
	argv   []string      // its arguments, from its name on
	server int           // its pid, and its process group's id
	step   stopStep      // how far stopping it has gone
}

type stopStep int

const (
	running     stopStep = iota
	awaitingEOF          // mcpgate is gone; the server may stop on its own
	terminated           // SIGTERM sent
	killed               // SIGKILL sent
)

func parseWardenArgs(args []string) (*warden, error) {
	if len(args) < 4 {
		return nil, errors.New("usage: " + WardenCommand + " PARENT_PID GRACE PATH ARG0 [ARG...]")
	}
	parent, err := strconv.Atoi(args[0])
	if err != nil {
		return nil, fmt.Errorf("%s: parent pid: %v", WardenCommand, err)
	}
	grace, err := time.ParseDuration(args[1])
	if err != nil {
		return nil, fmt.Errorf("%s: grace: %v", WardenCommand, err)
	}
	return &warden{parent: parent, grace: grace, path: args[2], argv: args[3:]}, nil
}

// detachStdio points the warden's stdin, stdout and stderr at /dev/null,
// so that only the server holds the pipes.
func detachStdio() error {
	null, err := os.OpenFile(os.DevNull, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	defer null.Close()
	for fd := range 3 {
		if err := syscall.Dup3(int(null.Fd()), fd, 0); err != nil {
			return err
		}
	}
	return nil
}

// watch runs until the server has exited, stopping it when asked to or
// when mcpgate is gone, then ends everything left and exits as it did.
func (w *warden) watch(signals <-chan os.Signal) int {
	var next <-chan time.Time // the next step of stopping, when one is due
	for {
		if ws, exited := w.reap(); exited {
			w.killRest(signals)
			return exitAs(ws)
		}
		select {
		case sig := <-signals:
			switch {
			case sig == syscall.SIGTERM:
				next = w.advance()
			case sig == syscall.SIGHUP && w.step == running && os.Getppid() != w.parent:
				// The gateway is gone and with it the write end of the
				// server's stdin: the first step of stopping has happened.
				w.step = awaitingEOF
				next = time.After(w.grace)
			}
			// SIGCHLD: reaped at the top of the loop.
		case <-next:
			next = w.advance()
		}
	}
}

// advance takes the next step of stopping the server and everything it
// started: SIGTERM, then (when the returned channel fires, or when asked
// again) SIGKILL.
func (w *warden) advance() <-chan time.Time {
	if w.step < terminated {
		w.step = terminated
		w.signalAll(syscall.SIGTERM)
		return time.After(w.grace)
	}
	w.step = killed
	w.signalAll(syscall.SIGKILL)
	return nil
}

// signalAll sends sig to the server's process group, as a gateway without
// a warden does, and to each other process the server started. It is only
// called while the server is not yet reaped, so its group id is still
// ours.
func (w *warden) signalAll(sig syscall.Signal) {
	syscall.Kill(-w.server, sig)
	for _, p := range descendants(os.Getpid()) {
		if p.pgrp != w.server && !p.zombie {
			syscall.Kill(p.pid, sig)
		}
	}
}

// reap collects every child that has exited, and reports the server's
// status once it is among them.
func (w *warden) reap() (syscall.WaitStatus, bool) {
	for {
		var ws syscall.WaitStatus
		pid, err := syscall.Wait4(-1, &ws, syscall.WNOHANG, nil)
		if err == syscall.EINTR {
			continue
		}
		if err != nil || pid <= 0 {
			return 0, false
		}
		if pid == w.server {
			return ws, true
		}
	}
}

// killRest kills and reaps everything the server left running, until the
// warden has no child left, or for at most the grace period: a process
// that cannot be killed (another user's, or stuck in the kernel) must not
// keep the gateway from learning that the server exited.
func (w *warden) killRest(signals <-chan os.Signal) {
	deadline := time.After(w.grace)
	for {
		for _, p := range descendants(os.Getpid()) {
			if !p.zombie {
				syscall.Kill(p.pid, syscall.SIGKILL)
			}
		}
		for {
			pid, err := syscall.Wait4(-1, nil, syscall.WNOHANG, nil)
			if err == syscall.ECHILD {
				return
			}
			if err != syscall.EINTR && pid <= 0 {
				break
			}
		}
		select {
		case <-signals: // SIGCHLD: look again
		case <-deadline:
			return
		}
	}
}

// exitAs ends the warden the way the server ended: the same exit status,
// or killed by the same signal.
func exitAs(ws syscall.WaitStatus) int {
	if !ws.Signaled() {
		return ws.ExitStatus()
	}
	sig := ws.Signal()
	// No core dump of the warden for a server's crash; the default action
	// for sig rather than the Go runtime's handler; then the signal itself.
	syscall.Setrlimit(syscall.RLIMIT_CORE, &syscall.Rlimit{})
	var dfl [64]byte // a zeroed struct sigaction, whatever the layout: SIG_DFL
	syscall.RawSyscall6(syscall.SYS_RT_SIGACTION, uintptr(sig), uintptr(unsafe.Pointer(&dfl)), 0, 8, 0, 0)
	var set [2]uint32 // a signal mask with sig: unblock it on this thread
	set[(sig-1)/32] |= 1 << uint((sig-1)%32)
	syscall.RawSyscall6(syscall.SYS_RT_SIGPROCMASK, 1 /* SIG_UNBLOCK */, uintptr(unsafe.Pointer(&set)), 0, 8, 0, 0)
	syscall.Kill(os.Getpid(), sig)
	time.Sleep(time.Second) // the signal is on its way; this is a fallback
	return 128 + int(sig)
}

// proc is one process, from /proc/PID/stat.
type proc struct {
	pid, ppid, pgrp int
	zombie          bool
}

// descendants lists the processes below root, from a scan of /proc: it
// works without CONFIG_PROC_CHILDREN, and gives each process's group. A
// process may start or end during the scan; callers look again.
func descendants(root int) []proc {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	children := map[int][]proc{}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if p, ok := readProc(pid); ok {
			children[p.ppid] = append(children[p.ppid], p)
		}
	}
	var out []proc
	seen := map[int]bool{root: true}
	for queue := []int{root}; len(queue) > 0; queue = queue[1:] {
		for _, c := range children[queue[0]] {
			if !seen[c.pid] {
				seen[c.pid] = true
				out = append(out, c)
				queue = append(queue, c.pid)
			}
		}
	}
	return out
}

func readProc(pid int) (proc, bool) {
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return proc{}, false
	}
	return parseStat(pid, stat)
}

// parseStat reads /proc/PID/stat: "pid (comm) state ppid pgrp …", where
// comm may hold spaces and parentheses.
func parseStat(pid int, stat []byte) (proc, bool) {
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 {
		return proc{}, false
	}
	fields := strings.Fields(string(stat[i+1:]))
	if len(fields) < 3 {
		return proc{}, false
	}
	ppid, err1 := strconv.Atoi(fields[1])
	pgrp, err2 := strconv.Atoi(fields[2])
	if err1 != nil || err2 != nil {
		return proc{}, false
	}
	return proc{pid: pid, ppid: ppid, pgrp: pgrp, zombie: fields[0] == "Z"}, true
}
