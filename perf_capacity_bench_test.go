package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// BenchmarkCapacity measures what one replica holds, for the README's
// capacity figures (go test -run '^$' -bench Capacity -benchtime 1x .):
// sessions opened and requests served per second, memory per idle and per
// active session, file descriptors per session and per session × upstream.
// It runs mcpgate -listen in front of fakeupstream, as a replica would run.
// Each figure is one measure of a fixed amount of work: b.N is not used.
func BenchmarkCapacity(b *testing.B) {
	dir := b.TempDir()
	echo := writeFile(b, dir, "echo.json", `{"name": "echo", "tools": [{"name": "echo"}, {"name": "hold", "do": {"wait_for_file": "`+filepath.Join(dir, "release")+`"}}]}`)
	shared := `{"mcpServers": {"fake": {"command": "fakeupstream", "args": [` + quote(echo) + `]}}, "policies": [], "max_sessions": 100000}`

	b.Run("sessions_per_s", func(b *testing.B) {
		url, _ := startCapacityGate(b, shared)
		const conc, n = 16, 2000
		start := time.Now()
		parallelDo(b, n, conc, func(int) error {
			c := newPerfHTTPClient(url, 1)
			err := c.initialize()
			c.http.CloseIdleConnections()
			return err
		})
		b.ReportMetric(n/time.Since(start).Seconds(), "sessions/s")
	})

	for _, era := range []string{"legacy", "modern"} {
		b.Run("requests_per_s/"+era, func(b *testing.B) {
			url, _ := startCapacityGate(b, shared)
			const conc, n = 64, 20000
			c := newPerfHTTPClient(url, conc)
			params := perfToolCall("fake__echo", `{"text":"hello"}`)
			if era == "legacy" {
				if err := c.initialize(); err != nil {
					b.Fatal(err)
				}
			} else {
				params = []byte(`{"name":"fake__echo","arguments":{"text":"hello"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"perf","version":"1"}}}`)
			}
			modernCall(c, params) // the first lists the tools
			start := time.Now()
			parallelDo(b, n, conc, func(int) error {
				if era == "modern" {
					return modernCall(c, params)
				}
				return c.call("tools/call", params).err
			})
			b.ReportMetric(n/time.Since(start).Seconds(), "requests/s")
		})
	}

	// Memory: RSS of mcpgate after n sessions, less before, over n. Idle:
	// initialized, nothing in flight. Active: one call each held in flight
	// (its answer stream open). One measure per run: -benchtime 1x.
	const sessions = 1000
	for _, active := range []bool{false, true} {
		name := "memory_per_session/idle"
		if active {
			name = "memory_per_session/active"
		}
		b.Run(name, func(b *testing.B) {
			os.Remove(filepath.Join(dir, "release"))
			url, pid := startCapacityGate(b, shared)
			warm := newPerfHTTPClient(url, 1)
			if err := warm.initialize(); err != nil {
				b.Fatal(err)
			}
			before := settledRSS(b, pid)
			clients := make([]*perfHTTPClient, sessions)
			parallelDo(b, sessions, 16, func(i int) error {
				clients[i] = newPerfHTTPClient(url, 1)
				return clients[i].initialize()
			})
			var held sync.WaitGroup
			if active {
				for _, c := range clients {
					held.Add(1)
					go func() {
						defer held.Done()
						c.call("tools/call", perfToolCall("fake__hold", `{}`))
					}()
				}
				waitFDs(b, pid, sessions) // each call's connection is open
			}
			after := settledRSS(b, pid)
			b.ReportMetric((after-before)*1024/sessions, "KiB/session")
			os.WriteFile(filepath.Join(dir, "release"), nil, 0o644)
			held.Wait()
		})
	}

	// File descriptors: mcpgate's open descriptors with n sessions (each
	// client keeps its connection), and with n sessions of a server run
	// once per session ("isolation": "session": a process, and its pipes,
	// per session × upstream).
	b.Run("fds", func(b *testing.B) {
		const n = 50
		for _, isolation := range []string{"shared", "session"} {
			config := `{"mcpServers": {"fake": {"command": "fakeupstream", "args": [` + quote(echo) + `], "isolation": "` + isolation + `"}}, "policies": []}`
			url, pid := startCapacityGate(b, config)
			before := countFDs(b, pid)
			clients := make([]*perfHTTPClient, n)
			parallelDo(b, n, 8, func(i int) error {
				clients[i] = newPerfHTTPClient(url, 1)
				if err := clients[i].initialize(); err != nil {
					return err
				}
				return clients[i].call("tools/call", perfToolCall("fake__echo", `{}`)).err
			})
			after := countFDs(b, pid)
			b.ReportMetric(float64(after-before)/n, "fds/session("+isolation+")")
		}
	})
}

func quote(s string) string { return fmt.Sprintf("%q", s) }

// modernCall makes one 2026-07-28 request: no session, headers mirroring the body.
func modernCall(c *perfHTTPClient, params []byte) error {
	id := c.nextID.Add(1)
	req, _ := http.NewRequest(http.MethodPost, c.url, strings.NewReader(string(appendRequest(nil, id, "tools/call", params))))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", "tools/call")
	req.Header.Set("Mcp-Name", "fake__echo")
	resp, err := c.http.Do(req)
	if err != nil {
		return err
	}
	return c.readAnswer(resp, id).err
}

// parallelDo runs do(0..n-1), conc at a time, failing at the first error.
func parallelDo(b *testing.B, n, conc int, do func(i int) error) {
	next := make(chan int)
	errs := make(chan error, conc)
	var wg sync.WaitGroup
	for range conc {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				if err := do(i); err != nil {
					select {
					case errs <- err:
					default:
					}
				}
			}
		}()
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
	select {
	case err := <-errs:
		b.Fatal(err)
	default:
	}
}

// settledRSS is mcpgate's resident memory in MiB once a collection had the
// chance to run: read twice, a beat apart, the lower kept.
func settledRSS(b *testing.B, pid int) float64 {
	best := 0.0
	for i := range 3 {
		if i > 0 {
			time.Sleep(200 * time.Millisecond) // let the collector run: a measurement's settling, not a wait for an event
		}
		rss, err := procMemory(pid, "VmRSS")
		if err != nil {
			b.Skip("no /proc: ", err)
		}
		if i == 0 || rss < best {
			best = rss
		}
	}
	return best
}

func countFDs(b *testing.B, pid int) int {
	entries, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	if err != nil {
		b.Skip("no /proc: ", err)
	}
	return len(entries)
}

// waitFDs waits until mcpgate holds at least n more descriptors than a
// fresh one would: the held calls' connections are all open.
func waitFDs(b *testing.B, pid, n int) {
	deadline := time.Now().Add(30 * time.Second)
	for countFDs(b, pid) < n {
		if time.Now().After(deadline) {
			b.Fatalf("mcpgate holds %d descriptors, want at least %d", countFDs(b, pid), n)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// startCapacityGate starts mcpgate -listen with config on a free port and
// returns its URL and pid; the benchmark's cleanup stops it.
func startCapacityGate(b *testing.B, config string) (string, int) {
	path := writeFile(b, b.TempDir(), "gate.json", config)
	cmd := exec.Command("mcpgate", "-config", path, "-listen", "127.0.0.1:0")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	urls := make(chan string, 1)
	go func() {
		lines := bufio.NewScanner(stderr)
		for lines.Scan() {
			if _, rest, ok := strings.Cut(lines.Text(), "mcpgate serving over HTTP"); ok {
				_, url, _ := strings.Cut(rest, "url=")
				url, _, _ = strings.Cut(url, " ")
				urls <- url
			}
		}
		io.Copy(io.Discard, stderr)
	}()
	b.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			cmd.Process.Kill()
			<-done
		}
	})
	select {
	case url := <-urls:
		return url, cmd.Process.Pid
	case <-time.After(20 * time.Second):
		b.Fatal(errors.New("mcpgate -listen did not say where it listens within 20s"))
	}
	return "", 0
}
