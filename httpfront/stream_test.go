package httpfront

import (
	"bytes"
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate/jsonrpc"
)

// While no GET stream is open, notifications wait for one up to
// backlogBytes and are dropped past it; requests, and the legacy
// transport's responses, are kept whatever the size (issue 8, item 7).
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
		request := []byte("request")
		st.Write(context.Background(), request)
		want := [][]byte{request}
		if legacy {
			response := []byte("response")
			st.WriteRelated(context.Background(), response, jsonrpc.IntID(1), true)
			want = append(want, response)
		}
		kept := st.backlog[len(st.backlog)-len(want):]
		for i := range want {
			if !bytes.Equal(kept[i], want[i]) {
				t.Errorf("legacy=%v: backlog ends with %q, want %q", legacy, kept, want)
			}
		}
	}
}
