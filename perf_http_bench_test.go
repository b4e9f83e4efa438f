package main

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// BenchmarkPerfHTTP: tools/call over Streamable HTTP, C calls in flight in
// one session: to the fake server's own HTTP endpoint (direct, fakeupstream
// -http), to the HTTP relay floor in front of the same server over stdio
// (relay, httpfloor_test.go), to mcpgate -listen in front of it, and, when
// MCPGATE_TBXARK names its binary, to TBXark/mcp-proxy in front of it
// (tbxark; see startTBXark).
func BenchmarkPerfHTTP(b *testing.B) {
	dir := b.TempDir()
	server := perfServer{"fake", writeFile(b, dir, "echo.json",
		`{"name": "echo", "tools": [{"name": "echo", "do": {"text": "ok"}}]}`)}
	const args = `{"text":"hello","n":42,"nested":{"list":[1,2,3]}}`
	for _, conc := range []int{1, 64} {
		b.Run(fmt.Sprintf("C=%d", conc), func(b *testing.B) {
			variants := []string{perfDirect, perfRelay, perfGate}
			if os.Getenv(tbxarkEnv) != "" {
				variants = append(variants, perfTBXark)
			}
			for _, variant := range variants {
				b.Run(variant, func(b *testing.B) {
					hopPID, call := startPerfHTTPEcho(b, variant, server, conc, args)
					benchPerfCalls(b, hopPID, conc, perfWarmup(), call)
				})
			}
		})
	}
}

// startPerfHTTPEcho starts variant in front of server, whose tool echo it
// calls with args over conc connections, and returns the pid of the
// process in front (0 when direct) and the call.
func startPerfHTTPEcho(b *testing.B, variant string, server perfServer, conc int, args string) (int, func(chan perfAnswer) perfAnswer) {
	url, hopPID := startPerfHTTPPeer(b, variant, server)
	c := newPerfHTTPClient(url, conc)
	if err := c.initialize(); err != nil {
		b.Fatalf("%s: initialize: %v", variant, err)
	}
	tool := "echo"
	if variant == perfGate {
		tool = server.name + "__echo"
	}
	params := perfToolCall(tool, args)
	return hopPID, func(chan perfAnswer) perfAnswer { return c.call("tools/call", params) }
}

// startPerfHTTPPeer starts the server's own HTTP endpoint (direct), the
// HTTP relay floor (relay), mcpgate -listen (mcpgate) or TBXark/mcp-proxy
// (tbxark) in front of it, on a free loopback port, and returns its URL and
// the pid of the process in front (0 when direct). The benchmark's cleanup
// stops it.
func startPerfHTTPPeer(b *testing.B, variant string, server perfServer) (string, int) {
	return startPerfHTTPPeerConfig(b, variant, server, "")
}

// startPerfHTTPPeerConfig is startPerfHTTPPeer with gateConfig added to
// mcpgate's config (see perfGateCommand).
func startPerfHTTPPeerConfig(b *testing.B, variant string, server perfServer, gateConfig string) (string, int) {
	switch variant {
	case perfTBXark:
		return startTBXark(b, server)
	case perfDirect, perfRelay:
		urlFile := filepath.Join(b.TempDir(), "url")
		cmd := exec.Command("fakeupstream", "-http", urlFile, server.spec)
		if variant == perfRelay {
			cmd = exec.Command("httpfloor", urlFile, "fakeupstream", server.spec)
		}
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() {
			cmd.Process.Kill() // it serves until killed
			cmd.Wait()
		})
		pid := 0
		if variant == perfRelay {
			pid = cmd.Process.Pid
		}
		return waitURLFile(b, urlFile), pid
	}
	// mcpgate says where it listens in its log: the port is free for sure,
	// which one taken and let go before would not be.
	cmd := perfGateCommand(b, variant, []perfServer{server}, gateConfig, "-listen", "127.0.0.1:0", "-log-level", "info")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	urls := make(chan string, 1)
	logDone := make(chan struct{})
	go func() {
		defer close(logDone)
		lines := bufio.NewScanner(stderr)
		for lines.Scan() {
			line := lines.Text()
			if _, rest, ok := strings.Cut(line, "mcpgate serving over HTTP"); ok {
				_, url, _ := strings.Cut(rest, "url=")
				url, _, _ = strings.Cut(url, " ")
				urls <- url
			} else if strings.Contains(line, "level=WARN") || strings.Contains(line, "level=ERROR") {
				fmt.Fprintln(os.Stderr, line)
			}
		}
	}()
	b.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-logDone:
		case <-time.After(30 * time.Second):
			fmt.Fprintln(os.Stderr, "perf: mcpgate -listen did not exit 30s after SIGTERM; killing it")
			cmd.Process.Kill()
			<-logDone
		}
		cmd.Wait()
	})
	select {
	case url := <-urls:
		return url, cmd.Process.Pid
	case <-logDone:
		b.Fatal("mcpgate -listen exited before it listened")
	case <-time.After(20 * time.Second):
		b.Fatal("mcpgate -listen did not say where it listens within 20s")
	}
	return "", 0
}

// waitURLFile waits for a server to write its URL to file, as fakeupstream
// -http does once it listens: polling for the event, with a generous limit.
func waitURLFile(b *testing.B, file string) string {
	deadline := time.Now().Add(20 * time.Second)
	for {
		if url, err := os.ReadFile(file); err == nil && len(url) > 0 {
			return strings.TrimSpace(string(url))
		}
		if time.Now().After(deadline) {
			b.Fatalf("no URL in %s after 20s", filepath.Base(file))
		}
		time.Sleep(5 * time.Millisecond)
	}
}
