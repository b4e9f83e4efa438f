package httpfront

import (
	"log/slog"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate/jsonrpc"
)

// A POST whose answer comes from elsewhere (an inline call finished on a
// server's reader, the usual case with many calls in flight) waits for it
// in a slot, woken through one channel: 2 allocations with the POST's
// waiter (a channel closed when the slot was filled, beside the channel
// of what comes before the answer, made it 3; a channel of the answer
// with room for one, 4).
func TestPostAnsweredLaterAllocations(t *testing.T) {
	st := newHTTPStream("s", false, slog.New(slog.DiscardHandler), time.Minute)
	defer st.end()
	id := jsonrpc.IntID(7)
	answer := []byte(directAnswer)
	post := func() {
		p, err := st.openPost(id, true)
		if err != nil {
			t.Fatal(err)
		}
		p.waitState() // made as the POST's handler waits
		if !st.TryWriteAnswer(answer, id) {
			t.Fatal("the answer was not taken")
		}
		if m, took := p.leave(); !took || string(m.msg) != directAnswer {
			t.Fatalf("the POST took %q (%v), want its answer", m.msg, took)
		}
		st.closePost(id, p)
	}
	post()
	if allocs := testing.AllocsPerRun(200, post); allocs > 2 {
		t.Errorf("a POST answered later takes %.0f allocations, want at most 2", allocs)
	}
}
