package main

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// TBXark/mcp-proxy (github.com/TBXark/mcp-proxy) is the HTTP peer issue 13
// sets mcpgate beside: a Go proxy, built on mark3labs/mcp-go, that fronts
// each configured server at a path of its own (it does not aggregate). It
// is optional: CI has no network to build it, and its code is not ours, so
// the benchmark runs it only when tbxarkEnv names a binary built
// elsewhere (the README's Performance section says how).
const (
	tbxarkEnv  = "MCPGATE_TBXARK"
	perfTBXark = "tbxark"
)

// startTBXark runs TBXark/mcp-proxy in front of server over stdio, serving
// Streamable HTTP (stateless, as its "streamable-http" type does), and
// returns its URL and pid once it routes the server's path. The benchmark's
// cleanup stops it.
func startTBXark(b *testing.B, server perfServer) (string, int) {
	// Its listen address is configured, not chosen by it: take a free port
	// and let it go. Another process could take it meanwhile; the start
	// then fails, and says so.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	config := fmt.Sprintf(`{"mcpProxy": {"baseURL": "http://%s", "addr": %q, "name": "tbxark", "version": "1", "type": "streamable-http"},
 "mcpServers": {%q: {"command": "fakeupstream", "args": [%q]}}}`, addr, addr, server.name, server.spec)
	path := filepath.Join(b.TempDir(), "tbxark.json")
	if err := os.WriteFile(path, []byte(config), 0o644); err != nil {
		b.Fatal(err)
	}
	cmd := exec.Command(os.Getenv(tbxarkEnv), "-config", path)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatalf("%s: %v", tbxarkEnv, err)
	}
	// It routes a server's path once it has listed the server's tools, and
	// logs it just before: that is when it is about to be ready.
	ready := make(chan struct{})
	logDone := make(chan struct{})
	var stopping atomic.Bool // what it logs once told to stop is not news
	go func() {
		defer close(logDone)
		lines := bufio.NewScanner(stderr)
		routed := false
		for lines.Scan() {
			line := lines.Text()
			switch {
			case !routed && strings.Contains(line, "Handling requests at"):
				routed = true
				close(ready)
			case !stopping.Load() && (strings.Contains(line, "Failed") || strings.Contains(line, "panic")):
				fmt.Fprintln(os.Stderr, "tbxark:", line)
			}
		}
	}()
	b.Cleanup(func() {
		stopping.Store(true)
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-logDone:
		case <-time.After(30 * time.Second):
			fmt.Fprintln(os.Stderr, "perf: tbxark did not exit 30s after SIGTERM; killing it")
			cmd.Process.Kill()
			<-logDone
		}
		cmd.Wait()
	})
	select {
	case <-ready:
		url := "http://" + addr + "/" + server.name + "/"
		waitRouted(b, url)
		return url, cmd.Process.Pid
	case <-logDone:
		b.Fatal("tbxark exited before it routed the server")
	case <-time.After(20 * time.Second):
		b.Fatal("tbxark did not route the server within 20s")
	}
	return "", 0
}

// waitRouted waits until url is routed (answered otherwise than 404), with
// a generous limit: TBXark logs the route just before it adds it.
func waitRouted(b *testing.B, url string) {
	deadline := time.Now().Add(20 * time.Second)
	for {
		resp, err := http.Get(url)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode != http.StatusNotFound {
				return
			}
		}
		if time.Now().After(deadline) {
			b.Fatalf("tbxark did not route %s within 20s", url)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
