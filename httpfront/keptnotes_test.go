package httpfront

import (
	"bytes"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate/jsonrpc"
)

// Notifications kept for sessions with no GET stream open are bounded for
// all sessions together, not only per session: at 200 idle sessions each
// would keep its 1 MiB of the same broadcasts (200 MiB). Past the bound
// the session that has kept notifications longest loses its oldest first
// (each keeps its newest, in order), the episode is logged once, and the
// newest session keeps what it was sent.
func TestKeptNotificationsBoundedForAllSessions(t *testing.T) {
	var logged bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logged, nil))
	var kept keptNotes
	const sessions = 200
	streams := make([]*httpStream, sessions)
	for i := range streams {
		streams[i] = newHTTPStream(fmt.Sprint("s", i), false, log, time.Second)
		streams[i].kept = &kept
	}
	pad := strings.Repeat("x", 16<<10)
	notes := map[int][]byte{}
	note := func(i int) []byte {
		if notes[i] == nil {
			notes[i] = fmt.Appendf(nil, `{"jsonrpc":"2.0","method":"notifications/message","params":{"n":%d,"pad":%q}}`, i, pad)
		}
		return notes[i]
	}
	for i := range backlogBytes / len(note(0)) {
		for _, st := range streams {
			st.WriteNotification(note(i), jsonrpc.ID{})
		}
	}
	total := 0
	for _, st := range streams {
		total += st.backlogBytes
	}
	const generous = keptNotesBytes + 2<<20 // the bound, and a message or two on the way
	if total > generous {
		t.Fatalf("%d idle sessions keep %d MiB of notifications; want at most %d MiB for all together", sessions, total>>20, generous>>20)
	}
	last := streams[sessions-1]
	if n := len(last.backlog); n == 0 || last.backlog[n-1].dropped || !bytes.Equal(last.backlog[n-1].msg, note(backlogBytes/len(note(0))-1)) {
		t.Errorf("the newest session lost its newest notification")
	}
	for _, st := range streams {
		var ns []int
		for _, p := range st.backlog {
			if !p.dropped {
				var n int
				fmt.Sscanf(string(p.msg), `{"jsonrpc":"2.0","method":"notifications/message","params":{"n":%d`, &n)
				ns = append(ns, n)
			}
		}
		for i := range ns {
			if i > 0 && ns[i] != ns[i-1]+1 || len(ns) > 0 && ns[len(ns)-1] != backlogBytes/len(note(0))-1 {
				t.Fatalf("session %s keeps notifications %v: want the newest, in order (the oldest go first)", st.id, ns)
			}
		}
	}
	if n := strings.Count(logged.String(), "the most mcpgate keeps for all sessions"); n != 1 {
		t.Errorf("the drops were logged %d times; want once:\n%s", n, logged.String())
	}
	// Opening a stream or ending a session gives back what it kept.
	for _, st := range streams {
		st.end()
	}
	if kept.total != 0 {
		t.Errorf("all sessions ended, and %d bytes are still counted", kept.total)
	}
}

// Sessions kept at once by many writers, some ending meanwhile, leave the
// account exact: nothing counted once all have ended (run with -race).
func TestKeptNotificationsAccountUnderConcurrency(t *testing.T) {
	kept := keptNotes{limit: 256 << 10}
	streams := make([]*httpStream, 40)
	for i := range streams {
		streams[i] = newHTTPStream(fmt.Sprint("s", i), false, slog.New(slog.DiscardHandler), time.Second)
		streams[i].kept = &kept
	}
	msg := bytes.Repeat([]byte("n"), 4<<10)
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			for n := range 200 {
				for i, st := range streams {
					if i%4 == w && n == 150 {
						st.end() // a session that goes while others still keep
					}
					st.WriteNotification(msg, jsonrpc.ID{})
				}
			}
		})
	}
	wg.Wait()
	kept.mu.Lock()
	total := kept.total
	kept.mu.Unlock()
	if total > kept.limit+len(msg)*4 {
		t.Errorf("%d bytes kept, want at most the bound %d and a message per writer", total, kept.limit)
	}
	for _, st := range streams {
		st.end()
	}
	if kept.total != 0 || kept.order.Len() != 0 {
		t.Errorf("all sessions ended, and %d bytes of %d sessions are still counted", kept.total, kept.order.Len())
	}
}
