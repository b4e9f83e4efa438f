//go:build !race

// The race detector makes sync.Pool drop what it is given and allocates
// more besides (1.9 MB here where the build without it takes 0.9): the
// bound is for what a gateway is built as.

package policy

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"testing"

	"github.com/mcpgate/mcpgate/config"
)

// maxFirstListBytes bounds what the default policies allocate to check a
// first tools/list of 100 ordinary tools, their detector built on the way:
// in an idle gateway, it is resident memory (no collection runs that
// early). It was 1.6 MB: every parameter name compiled the secret-file
// regexp, and a trigger word ending a description compiled rules of 1 KB
// patterns that cannot match so short a text. It was 1.0 MB: each rule's
// filter grew buffers of its own, and each definition was decoded into a
// map to read its name; 0.86 MB since, 0.26 MB of which is the filters'
// walk's buffer, made at its most and touched only as far as a walk goes.
const maxFirstListBytes = 1000 << 10

func TestFirstListCheckAllocatesLittle(t *testing.T) {
	if os.Getenv("MCPGATE_POLICY_FRESH_PROCESS") != "1" {
		cmd := exec.Command(os.Args[0], "-test.run=^TestFirstListCheckAllocatesLittle$", "-test.count=1")
		cmd.Env = append(os.Environ(), "MCPGATE_POLICY_FRESH_PROCESS=1")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		return
	}
	chain, err := Compile(config.DefaultPolicies(), Env{})
	if err != nil {
		t.Fatal(err)
	}
	peers := map[string][]string{}
	var defs [][]byte
	for s := range 10 {
		server := fmt.Sprintf("s%d", s)
		for i := range 10 {
			name := fmt.Sprintf("s%d_query_%03d", s, i)
			peers[server] = append(peers[server], name)
			defs = append(defs, []byte(`{"name": "`+name+`", "description": "Runs query `+strconv.Itoa(i)+` of workspace `+server+` against the records it holds and returns the rows as JSON, newest first; narrow them down with filter and limit.", `+
				`"inputSchema": {"type": "object", "properties": {"table": {"type": "string", "description": "the table to read"}, `+
				`"filter": {"type": "string", "description": "a filter expression such as status = 'open'"}, `+
				`"limit": {"type": "integer", "minimum": 1, "maximum": 1000, "description": "how many rows at most"}}, "required": ["table"]}}`))
		}
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for i, def := range defs {
		server := fmt.Sprintf("s%d", i/10)
		in := &Input{Stage: List, Server: server, Method: "tools/list", Kind: "tool", Name: server + "__t", UpstreamName: "t", Message: def, Peers: peers}
		if _, records, denied := chain.Run(context.Background(), in); denied != nil || len(records) != 0 {
			t.Fatalf("an ordinary definition: %v %v", records, denied)
		}
	}
	runtime.ReadMemStats(&after)
	if n := after.TotalAlloc - before.TotalAlloc; n > maxFirstListBytes {
		t.Errorf("checking a first list of %d tools allocated %d bytes, more than %d", len(defs), n, maxFirstListBytes)
	}
}
