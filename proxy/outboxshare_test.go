package proxy

import (
	"bytes"
	"testing"

	"github.com/mcpgate/mcpgate/jsonrpc"
)

// offerUntilRefused offers msg to q until the queue holds no more of it.
func offerUntilRefused(q *outbox, msg []byte) {
	for range sessionQueueBytes/len(msg) + 2 {
		q.offer(msg, jsonrpc.ID{})
	}
}

// Sessions whose clients do not read cannot each fill their 8 MiB queue
// with notifications: what all client queues hold beyond a small floor
// each is bounded for all sessions together. Past that bound a session
// beyond its floor has notifications dropped as when its own queue is
// full (the same log, once per episode), while a session within its floor
// still gets them; what the sessions held is given back as their clients
// read, and when they end.
func TestClientOutboxesBoundedForAllSessions(t *testing.T) {
	g := testGateway(t, "a")
	const sessions = 200
	msg := []byte(`{"jsonrpc":"2.0","method":"notifications/message","params":{"data":"` + string(bytes.Repeat([]byte("x"), 64<<10)) + `"}}`)
	var (
		all     []*session
		streams []*blockedStream
	)
	for range sessions {
		bs := &blockedStream{release: make(chan struct{})}
		s := newSession(g, bs, ServeOptions{})
		all, streams = append(all, s), append(streams, bs)
	}
	held := func() int {
		n := 0
		for _, s := range all {
			s.out.mu.Lock()
			n += s.out.bytes
			s.out.mu.Unlock()
		}
		return n
	}
	for _, s := range all {
		offerUntilRefused(s.out, msg) // the same bytes each time: only their count grows
	}
	// Each queue alone may hold 8 MiB: 1,600 MiB for 200 sessions.
	t.Logf("%d sessions that do not read hold %d MiB of notifications", sessions, held()>>20)
	if n := held(); n > 256<<20 {
		t.Fatalf("%d sessions that do not read hold %d MiB of notifications; want at most 256 MiB for all", sessions, n>>20)
	}
	fresh := &blockedStream{release: make(chan struct{})}
	within := newSession(g, fresh, ServeOptions{})
	within.out.offer(msg, jsonrpc.ID{})
	within.out.offer(msg, jsonrpc.ID{})
	within.out.mu.Lock()
	got := len(within.out.msgs)
	within.out.mu.Unlock()
	if got < 1 {
		t.Errorf("a session within its floor got none of its notifications while the others hold the shared bound")
	}
	for _, bs := range append(streams, fresh) {
		close(bs.release)
	}
	for _, s := range append(all, within) {
		s.out.Close()
	}
	if n := held(); n != 0 {
		t.Errorf("sessions that ended still hold %d bytes", n)
	}
	if over, holders := g.clientOutboxes.over.Load(), g.clientOutboxes.holders.Load(); over != 0 || holders != 0 {
		t.Errorf("the sessions ended, and the shared bound still counts %d bytes held by %d sessions", over, holders)
	}
}

// Past half the shared bound, the sessions holding the most beyond their
// floors are the ones refused: one holding less than the average still
// gets a burst past its floor, while one holding more gets nothing more.
func TestClientOutboxesPastHalfTheSharedBoundRefuseTheLargest(t *testing.T) {
	g := testGateway(t, "a")
	msg := []byte(`{"jsonrpc":"2.0","method":"notifications/message","params":{"data":"` + string(bytes.Repeat([]byte("x"), 64<<10)) + `"}}`)
	open := func() *session {
		bs := &blockedStream{release: make(chan struct{})}
		s := newSession(g, bs, ServeOptions{})
		t.Cleanup(func() { close(bs.release); s.out.Close() })
		return s
	}
	queued := func(s *session) int {
		s.out.mu.Lock()
		defer s.out.mu.Unlock()
		return len(s.out.msgs)
	}
	var hogs []*session
	for range clientQueuesBeyondFloors * 3 / 4 / sessionQueueBytes { // past half the bound, short of all of it
		s := open()
		offerUntilRefused(s.out, msg)
		hogs = append(hogs, s)
	}
	if over := g.clientOutboxes.over.Load(); over <= clientQueuesBeyondFloors/2 || over >= clientQueuesBeyondFloors {
		t.Fatalf("the sessions that do not read hold %d MiB beyond their floors; the test wants between half and all of the %d MiB bound", over>>20, clientQueuesBeyondFloors>>20)
	}
	burst := open()
	const burstMessages = 2 * clientQueueFloor / (64 << 10) // twice its floor
	for range burstMessages {
		burst.out.offer(msg, jsonrpc.ID{})
	}
	if got := queued(burst); got < burstMessages-1 { // one may be out in the blocked write
		t.Errorf("a session holding little got %d of a burst of %d notifications past its floor, want them all", got, burstMessages)
	}
	// A hog that reads a little, and makes room in its own queue, still
	// holds the most: what comes for it is refused.
	hog := hogs[0]
	hog.out.mu.Lock()
	hog.out.msgs = hog.out.msgs[:len(hog.out.msgs)-4]
	hog.out.bytes -= 4 * len(msg)
	hog.out.giveBack()
	before := len(hog.out.msgs)
	hog.out.mu.Unlock()
	hog.out.offer(msg, jsonrpc.ID{})
	if got := queued(hog); got != before {
		t.Errorf("a session holding the most got another notification past half the shared bound (%d queued, was %d)", got, before)
	}
}
