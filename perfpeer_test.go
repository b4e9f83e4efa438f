package main

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// The peers a benchmark's load generator drives over stdio, all in front of
// the same fakeupstream: the server itself, the relay floor in front of it,
// and mcpgate in front of it, bare or with its default policies.
const (
	perfDirect     = "direct"           // the client starts the server itself
	perfRelay      = "relay"            // relayfloor SERVER: two pipe hops, nothing else
	perfRelayWhole = "relay-whole"      // relayfloor -whole SERVER: the hops, each line held whole first (big results only)
	perfGate       = "mcpgate"          // mcpgate with "policies": [] (the gateway alone)
	perfPolicies   = "mcpgate-policies" // mcpgate as configured by default (secrets, injection, poisoning)
)

// perfServer is an upstream of a benchmark: its name in mcpgate's config
// and its fakeupstream spec.
type perfServer struct {
	name, spec string
}

// perfPeer is a started peer, initialized.
type perfPeer struct {
	variant string
	cmd     *exec.Cmd
	stdin   io.WriteCloser
	client  *perfClient
	hopPID  int // the relay's or mcpgate's pid; 0 when direct
}

// startPerfPeer starts variant in front of servers (direct and relay take
// exactly one) and initializes it; the benchmark's cleanup stops it.
// gateConfig is added to mcpgate's config at the top level (`"key": value,
// ...`, or "").
//
// mcpgate is the test binary's copy unless MCPGATE_PERF_BIN names a built
// one; under MCPGATE_PERF_PROFILE=DIR it runs as mcpgate-prof, writing its
// CPU and allocation profiles to DIR, named after the benchmark.
func startPerfPeer(b *testing.B, variant string, servers []perfServer, gateConfig string) *perfPeer {
	b.Helper()
	p, err := launchPerfPeer(perfPeerCommand(b, variant, servers, gateConfig), variant)
	if err != nil {
		b.Fatalf("%s: %v", variant, err)
	}
	b.Cleanup(p.stop)
	return p
}

// perfPeerCommand is the command that runs variant in front of servers.
func perfPeerCommand(b *testing.B, variant string, servers []perfServer, gateConfig string) *exec.Cmd {
	switch variant {
	case perfDirect, perfRelay, perfRelayWhole:
		if len(servers) != 1 {
			b.Fatalf("the %s peer has exactly one server, not %d", variant, len(servers))
		}
		if variant == perfRelay {
			return exec.Command("relayfloor", "fakeupstream", servers[0].spec)
		}
		if variant == perfRelayWhole {
			return exec.Command("relayfloor", "-whole", "fakeupstream", servers[0].spec)
		}
		return exec.Command("fakeupstream", servers[0].spec)
	case perfGate, perfPolicies:
		return perfGateCommand(b, variant, servers, gateConfig, "-log-level", "error")
	}
	b.Fatalf("unknown peer %q", variant)
	return nil
}

// launchPerfPeer starts cmd as variant and initializes it; on error, what
// it started is stopped.
func launchPerfPeer(cmd *exec.Cmd, variant string) (*perfPeer, error) {
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	p := &perfPeer{variant: variant, cmd: cmd, stdin: stdin, client: newPerfClient(stdout, stdin)}
	if variant != perfDirect {
		p.hopPID = cmd.Process.Pid
	}
	if err := p.initialize(); err != nil {
		p.stop()
		return nil, fmt.Errorf("initialize: %w", err)
	}
	return p, nil
}

// perfGateCommand is mcpgate with servers and the rest of its arguments,
// its config written to the benchmark's temporary directory.
func perfGateCommand(b *testing.B, variant string, servers []perfServer, gateConfig string, args ...string) *exec.Cmd {
	entries := make([]string, len(servers))
	for i, s := range servers {
		entries[i] = fmt.Sprintf(`%q: {"command": "fakeupstream", "args": [%q]}`, s.name, s.spec)
	}
	config := `{"mcpServers": {` + strings.Join(entries, ", ") + `}`
	if variant == perfGate {
		config += `, "policies": []`
	}
	if gateConfig != "" {
		config += ", " + gateConfig
	}
	if !strings.Contains(gateConfig, `"cache`) {
		config += `, "cache": false` // every start cold, unless the benchmark is of the discovery cache
	}
	path := filepath.Join(b.TempDir(), "gate.json")
	if err := os.WriteFile(path, []byte(config+"}"), 0o644); err != nil {
		b.Fatal(err)
	}
	// The test binary's mcpgate by default; the real binary when one is
	// given, as benchreport does: the same code, without the test
	// binary's extra packages, which weigh on its start and its memory.
	program := cmp.Or(os.Getenv("MCPGATE_PERF_BIN"), "mcpgate")
	var env []string
	if dir := os.Getenv("MCPGATE_PERF_PROFILE"); dir != "" {
		program = "mcpgate-prof"
		name := perfProfileName.ReplaceAllString(b.Name(), "_")
		env = append(os.Environ(),
			"MCPGATE_CPUPROFILE="+filepath.Join(dir, name+".cpu.pprof"),
			"MCPGATE_MEMPROFILE="+filepath.Join(dir, name+".allocs.pprof"))
	}
	cmd := exec.Command(program, append([]string{"-config", path}, args...)...)
	cmd.Env = env
	return cmd
}

var perfProfileName = regexp.MustCompile(`[^A-Za-z0-9=.-]+`)

func (p *perfPeer) initialize() error {
	params := []byte(`{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"perf","version":"1"}}`)
	if a := p.client.call("initialize", params, make(chan perfAnswer, 1)); a.err != nil {
		return a.err
	}
	return p.client.notify("notifications/initialized")
}

// tool is the name a client of this peer calls the tool by: mcpgate
// prefixes it with the server's name.
func (p *perfPeer) tool(server, name string) string {
	if p.variant == perfGate || p.variant == perfPolicies {
		return server + "__" + name
	}
	return name
}

// stop closes the peer's stdin, as a client leaving does, and waits for it
// to exit (killing it after a generous limit: a benchmark must end).
func (p *perfPeer) stop() {
	p.stdin.Close()
	select {
	case <-p.client.done:
	case <-time.After(30 * time.Second):
		fmt.Fprintf(os.Stderr, "perf: %s did not exit 30s after its stdin closed; killing it\n", p.variant)
		p.cmd.Process.Kill()
		<-p.client.done
	}
	p.cmd.Wait()
}

// perfToolCall is the params of a tools/call.
func perfToolCall(name string, arguments string) []byte {
	params, _ := json.Marshal(map[string]any{"name": name, "arguments": json.RawMessage(arguments)})
	return params
}
