package proxy

import (
	"bytes"
	"encoding/json"
	"runtime"
	"testing"

	"github.com/mcpgate/mcpgate/jsonrpc"
)

// A big result's answer to a stateless call is not copied into an encoded
// message: the POST writes it in parts (its head, the result's own bytes,
// the closing brace), as a session's answer goes to its stream. Encoded
// whole, a 50 MiB result was one more 50 MiB copy at the peak (mcpgate's
// peak RSS over three modern 50 MiB calls 166-215 MiB, a legacy session's
// 115 MiB).
func TestStatelessCallBigAnswerNotCopied(t *testing.T) {
	result := json.RawMessage(`{"content":[{"type":"text","text":"` + string(bytes.Repeat([]byte{'x'}, 8<<20)) + `"}]}`)
	least := ^uint64(0)
	var answer []byte
	for range 3 { // the least of three: another test's goroutine may allocate meanwhile
		c := newStatelessCall(&jsonrpc.Message{ID: jsonrpc.IntID(7)})
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		c.Answer(result, nil, nil)
		runtime.ReadMemStats(&after)
		least = min(least, after.TotalAlloc-before.TotalAlloc)
		answer = bytes.Join(c.take(), nil)
	}
	if least >= 1<<20 {
		t.Errorf("answering an 8 MiB result allocated %d KiB, want under 1 MiB (the result's bytes are not copied)", least>>10)
	}
	var m struct {
		ID     int             `json:"id"`
		Result json.RawMessage `json:"result"`
	}
	if err := json.Unmarshal(answer, &m); err != nil || m.ID != 7 || !bytes.Equal(m.Result, result) {
		t.Errorf("the answer is not the result with id 7 (err %v, id %d, %d result bytes)", err, m.ID, len(m.Result))
	}
}

// A stateless call's answer comes through a slot and a channel that says
// it came: 3 allocations with the call and its encoded answer (a channel
// of the answer's pieces with room for one, its buffer apart, made 4).
func TestStatelessCallAnswerAllocations(t *testing.T) {
	result := json.RawMessage(`{"content":[{"type":"text","text":"ok"}]}`)
	msg := &jsonrpc.Message{ID: jsonrpc.IntID(7)}
	call := func() {
		c := newStatelessCall(msg)
		c.Answer(result, nil, nil)
		if a := c.Wait(nil, nil); len(a) != 1 {
			t.Fatalf("the answer came in %d pieces, want 1", len(a))
		}
	}
	if allocs := testing.AllocsPerRun(200, call); allocs > 3 {
		t.Errorf("a stateless call answered takes %.0f allocations, want at most 3", allocs)
	}
}
