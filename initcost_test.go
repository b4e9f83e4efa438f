package main

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
)

// maxInitBytes bounds what mcpgate's own packages allocate before main
// runs. Every start pays it: mcpgate's, and each warden's (the same binary
// run again, one per local server). The detectors' rules are compiled on
// first use, never at start; compiled at start they were 3 MB. (Under the
// race detector the same start allocates several times what it does
// without; a little under 100 KB without.)
const maxInitBytes = 2 << 20

// TestStartCompilesNoDetectors: a bare start (mcpgate version, which is also
// what a warden's start costs before it runs) compiles no detector: the
// runtime's init trace shows mcpgate's packages allocating little.
func TestStartCompilesNoDetectors(t *testing.T) {
	cmd := exec.Command("mcpgate", "version")
	cmd.Env = append(os.Environ(), "GODEBUG=inittrace=1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("mcpgate version: %v\n%s", err, stderr.Bytes())
	}
	total, seen := 0, 0
	byPackage := map[string]int{}
	lines := bufio.NewScanner(&stderr)
	for lines.Scan() {
		// init github.com/mcpgate/mcpgate/proxy @3.1 ms, 0.011 ms clock, 3032 bytes, 19 allocs
		f := strings.Fields(lines.Text())
		if len(f) < 10 || f[0] != "init" || !strings.HasPrefix(f[1], "github.com/mcpgate/mcpgate/") || f[8] != "bytes," {
			continue // the main package holds the test binary's own variables: not mcpgate's
		}
		n, err := strconv.Atoi(f[7])
		if err != nil {
			t.Fatalf("init trace line %q: %v", lines.Text(), err)
		}
		byPackage[f[1]] = n
		total += n
		seen++
	}
	if seen == 0 {
		t.Fatalf("no init trace of mcpgate's packages in:\n%s", stderr.Bytes())
	}
	if total > maxInitBytes {
		t.Errorf("mcpgate's packages allocate %d bytes at start, more than %d: %v", total, maxInitBytes, byPackage)
	}
}
