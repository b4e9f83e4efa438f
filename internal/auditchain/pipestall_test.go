package auditchain

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// slowPipe stands for a pipe whose reader reads, slowly: within each write
// deadline it takes at most perWindow bytes, and a write asking for more
// ends at the deadline with what was taken. A reader that stopped takes
// nothing (perWindow 0).
type slowPipe struct {
	bytes.Buffer
	perWindow int
	takes     []int     // before perWindow: what each window takes, in turn
	deadline  time.Time // the last one set
}

func (p *slowPipe) SetWriteDeadline(t time.Time) error { p.deadline = t; return nil }

// lastWait is how long the last write was given, from now.
func (p *slowPipe) lastWait() time.Duration { return time.Until(p.deadline) }

func (p *slowPipe) Write(b []byte) (int, error) {
	take := p.perWindow
	if len(p.takes) > 0 {
		take, p.takes = p.takes[0], p.takes[1:]
	}
	n := min(len(b), take)
	p.Buffer.Write(b[:n])
	if n < len(b) {
		return n, os.ErrDeadlineExceeded
	}
	return n, nil
}

// TestPipeSlowReaderLosesNoRecord: a pipe trail whose reader takes a
// little within each stall limit is slow, not stalled, and keeps every
// record, however large: what is lost is what comes while the reader takes
// nothing for the limit (README: "whose reader takes nothing for 10 s").
// The whole write had one deadline, so a record that took the reader
// longer than 10 s to take was cut and lost, and the next ones only tried.
func TestPipeSlowReaderLosesNoRecord(t *testing.T) {
	pipe := &slowPipe{perWindow: 4 << 10}
	w := NewStream(pipe, Options{Host: "box"})
	big := fmt.Appendf(nil, `{"body":%q}`, strings.Repeat("x", 64<<10))
	for i, rec := range [][]byte{big, []byte(`{"n":1}`), big, []byte(`{"n":2}`)} {
		if res := w.Append(rec); res.Err != nil {
			t.Fatalf("record %d to a pipe whose reader reads: %v", i, res.Err)
		}
	}
	path := filepath.Join(t.TempDir(), "trail.jsonl")
	if err := os.WriteFile(path, pipe.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	rep := mustVerify(t, []string{path}, 5) // the header and four records
	if len(rep.Notes) > 0 {
		t.Errorf("notes %v; want none: no write was cut", rep.Notes)
	}

	// The reader takes part of a record and stops: that record waits one
	// limit for it and is lost, cut, and the next only tries; once the
	// reader takes some again, however little, records are kept, and the
	// chain still verifies, the cut line noted.
	pipe.takes = []int{1000, 0}
	if res := w.Append(big); res.Err == nil || !res.Began {
		t.Fatalf("a record to a pipe whose reader stopped: %+v; want lost, an episode begun", res)
	}
	if wait := pipe.lastWait(); wait < pipeStallLimit/2 {
		t.Errorf("a write to a reader that takes some was given %v; want the stall limit, %v", wait, pipeStallLimit)
	}
	pipe.takes = []int{0}
	if res := w.Append(big); res.Err == nil {
		t.Fatalf("a record while the reader still takes nothing: %+v; want lost", res)
	}
	if wait := pipe.lastWait(); wait > time.Second {
		t.Errorf("a write to a stalled reader was given %v; want only a try (%v)", wait, pipeRetryWait)
	}
	pipe.perWindow = 100
	if res := w.Append(big); res.Err != nil || !res.Ended {
		t.Fatalf("a record once the reader reads again, slowly: %+v; want kept, the episode ended", res)
	}
	if err := os.WriteFile(path, pipe.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	rep = mustVerify(t, []string{path}, 6)
	if len(rep.Notes) != 1 {
		t.Errorf("notes %v; want one, the cut record", rep.Notes)
	}
}

// A reader that takes a little within each limit, but so little that a
// record would take it longer than pipeWriteLimit, holds no record (and
// every one behind it) longer than that: the record is lost, cut, as to a
// reader that stopped.
func TestPipeTricklingReaderHoldsARecordAtMostTheWriteLimit(t *testing.T) {
	pipe := &slowPipe{perWindow: 1}
	w := NewStream(pipe, Options{Host: "box"})
	clock := time.Date(2026, 11, 26, 1, 2, 3, 0, time.UTC)
	w.now = func() time.Time { clock = clock.Add(pipeStallLimit); return clock } // each window passes whole
	if res := w.Append([]byte(`{"n":1}`)); res.Err == nil {
		t.Fatalf("a record to a reader taking a byte a window: kept; want lost past %v", pipeWriteLimit)
	}
	if got := pipe.Len(); got > int(pipeWriteLimit/pipeStallLimit)+2 {
		t.Errorf("%d windows waited for a reader taking a byte in each; want at most %d", got, pipeWriteLimit/pipeStallLimit+1)
	}
}
