package policy

import (
	"context"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"

	"github.com/mcpgate/mcpgate/config"
)

// maxCompileBytes bounds what making the default policies allocates: their
// detectors (megabytes of compiled rules) are built when they first scan,
// not when the config is read.
const maxCompileBytes = 1 << 20

// The default policies cost next to nothing until they run: a gateway
// that nobody calls a tool through holds no compiled detector. Once used,
// they work as ever. (In a process of its own: other tests build the
// detectors, once per process.)
func TestDefaultPoliciesBuildDetectorsOnFirstUse(t *testing.T) {
	if os.Getenv("MCPGATE_POLICY_FRESH_PROCESS") != "1" {
		cmd := exec.Command(os.Args[0], "-test.run=^TestDefaultPoliciesBuildDetectorsOnFirstUse$", "-test.count=1")
		cmd.Env = append(os.Environ(), "MCPGATE_POLICY_FRESH_PROCESS=1")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		return
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	chain, err := Compile(config.DefaultPolicies(), Env{})
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	if n := after.TotalAlloc - before.TotalAlloc; n > maxCompileBytes {
		t.Errorf("making the default policies allocated %d bytes, more than %d: detectors were built before use", n, maxCompileBytes)
	}
	in := &Input{Stage: Request, Server: "s", Method: "tools/call", Kind: "tool", Name: "s__t", UpstreamName: "t",
		Message: []byte(`{"name":"t","arguments":{"key":"AKIAZ2Q3W4E5R6T7Y2U3"}}`)}
	msg, _, denied := chain.Run(context.Background(), in)
	if denied != nil || strings.Contains(string(msg), "AKIAZ2Q3W4E5R6T7Y2U3") {
		t.Errorf("the secrets policy did not redact the key once used: %s (%v)", msg, denied)
	}
}

// maxRecompileBytes bounds what making the default policies again
// allocates: a gateway makes them for each of its servers, and what every
// secrets policy knows of the detector's kinds (a description of every
// rule) was made anew each time, 36 KB a server.
const maxRecompileBytes = 8 << 10

func TestDefaultPoliciesPerServerShareWhatTheyKnow(t *testing.T) {
	if _, err := Compile(config.DefaultPolicies(), Env{}); err != nil {
		t.Fatal(err)
	}
	const servers = 10
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range servers {
		if _, err := Compile(config.DefaultPolicies(), Env{}); err != nil {
			t.Fatal(err)
		}
	}
	runtime.ReadMemStats(&after)
	if n := (after.TotalAlloc - before.TotalAlloc) / servers; n > maxRecompileBytes {
		t.Errorf("making the default policies for one more server allocated %d bytes, more than %d", n, maxRecompileBytes)
	}
}
