package proxy

import (
	"context"
	"encoding/json"
	"io"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/mcpgate/mcpgate/config"
	"github.com/mcpgate/mcpgate/jsonrpc"
	"github.com/mcpgate/mcpgate/policy"
)

// piecesReader gives its bytes a few at a time, as a pipe a server writes
// into does: most reads end inside a line.
type piecesReader struct {
	b   []byte
	rng *rand.Rand
}

func (r *piecesReader) Read(p []byte) (int, error) {
	if len(r.b) == 0 {
		return 0, io.EOF
	}
	n := min(len(p), len(r.b), 1+r.rng.IntN(8<<10))
	copy(p, r.b[:n])
	r.b = r.b[n:]
	return n, nil
}

// A stdio server's lines read by the real line reader in pieces, watched
// as mcpgate watches them: every result the slot gives a prescan to is
// decided on as without it (its secrets redacted at the same places), a
// notification or a list in between takes nothing, and big results are
// given their prescan at all.
func TestPrescanThroughTheLineReader(t *testing.T) {
	chain, err := policy.Compile(config.DefaultPolicies(), policy.Env{})
	if err != nil {
		t.Fatal(err)
	}
	u := &upstream{}
	u.base = u
	u.policies.Store(&serverPolicies{chain: chain})
	const key = "AKIAZ2Q3W4E5R6T7Y2U3"
	text := func(n int, escaped bool) string {
		s := strings.Repeat("log \"line\"\twith é and \U0001F600 ", n/30) + " key " + key + " end"
		b, _ := json.Marshal(s)
		if escaped {
			return strings.ReplaceAll(string(b), "é", `\u00e9`)
		}
		return string(b)
	}
	var lines []string
	// The lines between results are longer: a result longer than the line
	// before it outgrows the buffer the reader gives it (not prescanned).
	for i, size := range []int{150 << 10, 120 << 10, 120 << 10, 60 << 10, 200 << 10, 70 << 10} {
		result := `{"content":[{"type":"text","text":` + text(size, i%2 == 0) + `}],"structuredContent":{"text":` + text(size/4, i%2 == 1) + `}}`
		lines = append(lines,
			`  {"jsonrpc":"2.0","id":`+string(rune('1'+i))+`,"result":`+result+"}\r",
			`{"jsonrpc":"2.0","method":"notifications/message","params":{"data":`+text(300<<10, false)+`}}`,
			`{"jsonrpc":"2.0","id":"l`+string(rune('1'+i))+`","result":{"tools":[{"name":"a","description":`+text(300<<10, true)+`}]}}`)
	}
	stream := jsonrpc.NewLineStream(&piecesReader{[]byte(strings.Join(lines, "\n") + "\n"), rand.New(rand.NewPCG(3, 14))}, io.Discard, nil, 64<<20)
	u.watchResults(stream)
	ctx := context.Background()
	given := 0
	for {
		data, err := stream.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		msg, err := jsonrpc.Decode(data)
		if err != nil {
			t.Fatal(err)
		}
		ps := u.prescan.take(msg.Result)
		if ps == nil {
			continue
		}
		if msg.Method != "" || strings.Contains(string(msg.Result), `"tools"`) {
			t.Fatalf("a message that is no result to decide on was given a prescan: %.80s", data)
		}
		given++
		in := &policy.Input{Stage: policy.Result, Server: "s", Method: "tools/call", Kind: "tool", Name: "s__t", Message: msg.Result}
		want, wantRecords, _ := chain.Run(ctx, in)
		in.Prescan = ps
		got, records, _ := chain.Run(ctx, in)
		if string(got) != string(want) || !reflect.DeepEqual(records, wantRecords) || strings.Contains(string(got), key) {
			t.Fatalf("result %s: with its prescan Run gave %+v, without %+v; same message: %v", msg.ID, records, wantRecords, string(got) == string(want))
		}
	}
	if given != 6 {
		t.Fatalf("%d results were given their prescan, want all 6", given)
	}
}
