package httpfront

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate/jsonrpc"
)

// While no GET stream is open, notifications wait for one up to
// backlogBytes and are dropped past it; a request, and the legacy
// transport's responses, are kept however many notifications came before
// (issue 8, item 7).
func TestBacklogBoundedInBytes(t *testing.T) {
	for _, legacy := range []bool{false, true} {
		st := newHTTPStream("s", legacy, slog.New(slog.DiscardHandler), time.Second)
		note := bytes.Repeat([]byte("n"), 64<<10)
		for range 4 * backlogBytes / len(note) {
			st.WriteNotification(note, jsonrpc.ID{})
		}
		if st.backlogBytes > backlogBytes {
			t.Errorf("legacy=%v: %d bytes of notifications kept, want at most %d", legacy, st.backlogBytes, backlogBytes)
		}
		request := []byte(`{"jsonrpc":"2.0","id":1,"method":"roots/list"}`)
		st.Write(context.Background(), request)
		want := [][]byte{request}
		if legacy {
			response := []byte("response")
			st.WriteRelated(context.Background(), response, jsonrpc.IntID(1), true)
			want = append(want, response)
		}
		var kept [][]byte
		for _, p := range st.backlog[len(st.backlog)-len(want):] {
			kept = append(kept, p.msg)
		}
		for i := range want {
			if !bytes.Equal(kept[i], want[i]) {
				t.Errorf("legacy=%v: backlog ends with %q, want %q", legacy, kept, want)
			}
		}
	}
}

// Requests to the client (sampling, elicitation, roots) that wait for a GET
// stream are bounded in bytes too: past the bound the oldest are dropped
// (their callers have almost surely given up), the episode is logged once,
// and the newest are kept in order. Responses are never dropped (review 1,
// finding 3).
func TestBacklogBoundsRequests(t *testing.T) {
	var logged bytes.Buffer
	st := newHTTPStream("s", false, slog.New(slog.NewTextHandler(&logged, nil)), time.Second)
	request := func(n int) []byte {
		return fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%d,"method":"sampling/createMessage","params":{"pad":"%s"}}`, n, strings.Repeat("x", 1<<20))
	}
	for n := range 100 {
		st.Write(context.Background(), request(n))
	}
	const generous = 16 << 20 // well above the bound, well below the 100 MiB written
	if st.backlogBytes > generous {
		t.Errorf("%d bytes of requests kept for a GET stream never opened, want at most %d", st.backlogBytes, generous)
	}
	var kept [][]byte
	for _, p := range st.backlog {
		if !p.dropped {
			kept = append(kept, p.msg)
		}
	}
	if len(kept) == 0 || !bytes.Equal(kept[len(kept)-1], request(99)) {
		t.Fatalf("the newest request is not the last one kept")
	}
	for i := range kept {
		if want := request(100 - len(kept) + i); !bytes.Equal(kept[i], want) {
			t.Fatalf("kept request %d of %d is not request %d: the oldest must go first, the rest in order", i, len(kept), 100-len(kept)+i)
		}
	}
	if n := strings.Count(logged.String(), "requests to the client"); n != 1 {
		t.Errorf("the episode was logged %d times, want once:\n%s", n, logged.String())
	}

	legacy := newHTTPStream("s", true, slog.New(slog.DiscardHandler), time.Second)
	response := bytes.Repeat([]byte("r"), 1<<20)
	for n := range 20 {
		legacy.WriteRelated(context.Background(), response, jsonrpc.IntID(int64(n)), true)
	}
	if legacy.backlogBytes != 20*len(response) {
		t.Errorf("%d bytes of responses kept, want all %d: responses are never dropped", legacy.backlogBytes, 20*len(response))
	}
}
