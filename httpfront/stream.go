package httpfront

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpgate/mcpgate/internal/rawjson"
	"github.com/mcpgate/mcpgate/jsonrpc"
)

const (
	// backlogBytes bounds what waits for a session's GET stream while none
	// is open: a notification that would pass it is dropped.
	backlogBytes = 1 << 20
	// requestBacklogBytes bounds the requests to the client (sampling,
	// elicitation, roots) among what waits for a GET stream. Past it the
	// oldest are dropped: a request kept for a stream that has not opened
	// outlives its caller, who gave up by its own deadline (the message
	// stays here after callClient returns), so an upstream that asks and
	// cancels in a loop would otherwise grow the session for ever. A caller
	// still waiting for a dropped request gets no answer and ends at its
	// deadline. Larger than backlogBytes: a request is worth more than a
	// log line, and callers have at most 64 MiB in flight per upstream.
	// Responses (the legacy transport's, a batch's whose POST is gone) are
	// never dropped.
	requestBacklogBytes = 8 << 20
	// clientWriteTimeout bounds each write to a client: one message or
	// event. A client that takes none for this long is not reading, and its
	// stream or answer is cut off rather than hold the session's queue.
	clientWriteTimeout = time.Minute
)

// httpStream is one HTTP session seen as a jsonrpc.Stream: Read returns what
// the client POSTs; a message related to an open POST goes back on it, and
// everything else goes on the session's GET stream (held in a backlog
// bounded in bytes while none is open).
//
// Messages are handed to the handler that writes them one at a time: the
// session's outbox in front is the queue, bounded in bytes, and a client
// that stops reading holds up only it. The one buffer here is the backlog
// kept while no GET stream is open, bounded by backlogBytes for
// notifications and requestBacklogBytes for requests.
type httpStream struct {
	id           string        // the session's Mcp-Session-Id
	legacy       bool          // HTTP+SSE: everything goes on the GET stream, answers too
	log          *slog.Logger  // told once per episode of dropped notifications
	writeTimeout time.Duration // bounds each write to the client: clientWriteTimeout

	inbox     chan posted   // messages the client POSTed, for the connection's reader
	ended     chan struct{} // closed when the session ends
	closed    chan struct{} // closed when the session's connection closed the stream: it writes nothing more
	closeOnce sync.Once

	// The connection's serve function, once it has given it (see
	// jsonrpc.DirectStream): POSTed messages are then served on their
	// POSTs' goroutines, one at a time under serveMu, not read.
	hooked  chan struct{} // closed when serve is set
	serveMu sync.Mutex
	serve   func(msg *jsonrpc.Message, raw []byte, here bool) (job func())
	endOnce sync.Once
	deleted atomic.Bool // the client ended the session: its requests are abandoned at once
	held    heldBodies  // its requests' bodies, counted in the front's budget until answered
	kept    *keptNotes  // the front's account of notifications kept for all sessions; nil: none

	mu           sync.Mutex
	posts        map[jsonrpc.ID]*postWaiter // open POSTs, by the id of their request
	batch        *postWaiter                // the open POST of a batch, if any
	standalone   *sseSink                   // the open GET stream, if any
	backlog      []pending                  // for the GET stream while none is open, oldest first
	backlogBytes int                        // the size of what backlog holds, not counting what was dropped from it
	requestBytes int                        // the part of backlogBytes that is requests
	oldest       int                        // no request is kept in backlog before this index
	holes        int                        // entries of backlog dropped (compacted when they are half of it)
	noteBytes    int                        // the part of backlogBytes that is notifications
	oldestNote   int                        // no notification is kept in backlog before this index
	dropping     bool                       // notifications were dropped since the last GET stream opened
	droppingReqs bool                       // requests were dropped since the last GET stream opened
}

// pending is one message kept for the GET stream.
type pending struct {
	msg     []byte
	request bool // a request to the client: dropped, oldest first, past requestBacklogBytes
	note    bool // a notification: dropped, oldest first, past keptNotesBytes for all sessions
	dropped bool // taken out for room; its place is kept until compaction
}

func newHTTPStream(id string, legacy bool, log *slog.Logger, writeTimeout time.Duration) *httpStream {
	return &httpStream{id: id, legacy: legacy, log: log, writeTimeout: writeTimeout, inbox: make(chan posted), ended: make(chan struct{}), closed: make(chan struct{}), hooked: make(chan struct{}), posts: map[jsonrpc.ID]*postWaiter{}}
}

// posted is one POSTed body: a message the front has decoded (to route
// it), or a batch, passed on as it came.
type posted struct {
	msg *jsonrpc.Message
	raw []byte
}

func (st *httpStream) Read() ([]byte, error) {
	m, raw, err := st.ReadMessage()
	if m != nil {
		return m.Encode(), nil
	}
	return raw, err
}

// ReadMessage hands the session what the client POSTed, as the front
// decoded it: the session does not decode it again.
func (st *httpStream) ReadMessage() (*jsonrpc.Message, []byte, error) {
	select {
	case <-st.hooked: // messages are served as they come: nothing to read
		<-st.ended
		return nil, nil, io.EOF
	default:
	}
	select {
	case p := <-st.inbox:
		return p.msg, p.raw, nil
	case <-st.ended:
		return nil, nil, io.EOF
	}
}

// deliver hands a POSTed message (decoded: msg; else raw) to the session:
// served at once, or to its reader. A request's handler runs elsewhere.
func (st *httpStream) deliver(msg *jsonrpc.Message, raw []byte) {
	st.serveOrDeliver(msg, raw, false)
}

// serveHere is deliver for a request whose handler the caller runs itself,
// on its own goroutine: it returns the job that does, or nil when the
// request was handed on (to the reader, or refused, or the session ended).
// served reports that the session's connection took it here: its answer
// is owed, even if the session ends meanwhile (see answernow.go).
func (st *httpStream) serveHere(msg *jsonrpc.Message) (job func(), served bool) {
	return st.serveOrDeliver(msg, nil, true)
}

func (st *httpStream) serveOrDeliver(msg *jsonrpc.Message, raw []byte, here bool) (job func(), served bool) {
	// Hooked first, alone: once hooked, as a session is from its first
	// message on, every POST comes here, and a receive from one channel
	// costs less than a select that locks all three.
	select {
	case <-st.hooked:
		return st.serveHooked(msg, raw, here)
	default:
	}
	select {
	case <-st.hooked:
		return st.serveHooked(msg, raw, here)
	case st.inbox <- posted{msg, raw}:
	case <-st.ended:
	}
	return nil, false
}

// serveHooked serves a message with the connection's serve function, one
// at a time, unless the session ended.
func (st *httpStream) serveHooked(msg *jsonrpc.Message, raw []byte, here bool) (job func(), served bool) {
	st.serveMu.Lock()
	defer st.serveMu.Unlock()
	select {
	case <-st.ended:
		return nil, false
	default:
	}
	return st.serve(msg, raw, here), true
}

// ServeDirect takes the connection's serve function (jsonrpc.DirectStream).
func (st *httpStream) ServeDirect(serve func(msg *jsonrpc.Message, raw []byte, here bool) (job func())) {
	st.serve = serve
	close(st.hooked)
}

// Write sends a message that belongs to no request (a request to the
// client, a batch's answer): on the GET stream, or kept for it.
func (st *httpStream) Write(ctx context.Context, msg []byte) error {
	kind := keptResponse
	if isRequest(msg) {
		kind = keptRequest
	}
	return st.toStream(msg, kind)
}

// WriteRelated sends a message on the POST of request related when it is
// still open (and, before the answer, when the client accepts SSE). An
// answer whose POST is gone is dropped: a response must not go on the GET
// stream. Anything else falls back to the GET stream.
func (st *httpStream) WriteRelated(ctx context.Context, msg []byte, related jsonrpc.ID, final bool) error {
	return st.writeRelated(postMsg{msg: msg, final: final}, related, relatedKind(final))
}

// WriteParts is WriteRelated for a message given in parts (a big result;
// see jsonrpc.PartsWriter): on its open POST the parts are written one
// after the other, never joined into one buffer. Only a message that must
// wait for the GET stream is joined, to be kept.
func (st *httpStream) WriteParts(ctx context.Context, parts [][]byte, related jsonrpc.ID, final bool) error {
	return st.writeRelated(postMsg{parts: parts, final: final}, related, relatedKind(final))
}

// relatedKind is what becomes of a message related to a request when it
// must wait for the GET stream.
func relatedKind(final bool) keptKind {
	if final {
		return keptResponse
	}
	return keptRequest // what precedes an answer and is not a notification
}

// WriteNotification is WriteRelated for a notification (related, if valid,
// is the request it belongs to): one that must wait for a GET stream is
// dropped when the backlog is full.
func (st *httpStream) WriteNotification(msg []byte, related jsonrpc.ID) error {
	return st.writeRelated(postMsg{msg: msg}, related, keptNotification)
}

// keptKind says what may become of a message kept for the GET stream.
type keptKind int

const (
	keptResponse     keptKind = iota // never dropped
	keptRequest                      // the oldest dropped past requestBacklogBytes
	keptNotification                 // dropped when it does not fit in backlogBytes
)

// isRequest reports whether msg, written with no request to relate it to,
// is a request to the client rather than an answer (a batch's, or an
// error for a message without an id). Only the start is read: Encode
// writes "id" and "method" before the params.
func isRequest(msg []byte) bool {
	keys, _ := rawjson.PrefixKeys(msg[:min(len(msg), 512)])
	return slices.Contains(keys, "method") && slices.Contains(keys, "id")
}

func (st *httpStream) writeRelated(m postMsg, related jsonrpc.ID, kind keptKind) error {
	if (m.final || m.none()) && related.IsValid() {
		st.held.answered(related)
	}
	if st.legacy {
		return st.toStream(m.joined(), kind)
	}
	if related.IsValid() {
		st.mu.Lock()
		p := st.posts[related]
		st.mu.Unlock()
		if p != nil && p.send(m) {
			return nil
		}
	}
	if m.final || m.none() {
		return nil
	}
	return st.toStream(m.joined(), kind)
}

// toStream hands a message to the GET stream's handler, waiting until it
// takes it; while none is open, the message is kept for the next one.
func (st *httpStream) toStream(msg []byte, kind keptKind) error {
	st.mu.Lock()
	if b := st.batch; b != nil && len(msg) > 0 && msg[0] == '[' {
		st.mu.Unlock()
		if b.send(postMsg{msg: msg, final: true}) {
			return nil
		}
		// Its POST left before serveBatch let it go: kept, as a
		// response whose POST is gone is.
		st.mu.Lock()
	}
	sink := st.standalone
	if sink == nil {
		st.keep(msg, kind)
		return nil
	}
	st.mu.Unlock()
	select {
	case sink.ch <- msg:
	case <-sink.done:
		st.mu.Lock()
		st.keep(msg, kind)
	case <-st.ended:
		return jsonrpc.ErrClosed
	}
	return nil
}

// keep holds a message for the next GET stream: a notification that does
// not fit in backlogBytes is dropped instead, and a request past
// requestBacklogBytes makes room by dropping the oldest requests (the
// newest is kept whatever its size). st.mu is held on entry and released on
// return (the first drop of an episode is logged after).
func (st *httpStream) keep(msg []byte, kind keptKind) {
	if kind == keptNotification && st.backlogBytes > 0 && st.backlogBytes+len(msg) > backlogBytes {
		first := !st.dropping
		st.dropping = true
		kept := st.backlogBytes
		st.mu.Unlock()
		if first {
			st.log.Info("HTTP session has no GET stream open: notifications for it are dropped until one opens", "session", st.id, "kept_bytes", kept)
		}
		return
	}
	first, note, episodeDropped := false, kind == keptNotification, 0
	if note {
		var ok bool
		if ok, episodeDropped = st.keepNote(len(msg)); !ok {
			st.mu.Unlock()
			return
		}
	}
	if kind == keptRequest {
		for st.requestBytes > 0 && st.requestBytes+len(msg) > requestBacklogBytes {
			first = first || !st.droppingReqs
			st.droppingReqs = true
			st.dropOldestRequest()
		}
		st.requestBytes += len(msg)
	}
	st.backlog = append(st.backlog, pending{msg: msg, request: kind == keptRequest, note: note})
	st.backlogBytes += len(msg)
	st.mu.Unlock()
	if note && st.kept != nil {
		if episodeDropped > 0 {
			st.log.Info("HTTP sessions without a GET stream fit in what mcpgate keeps for all sessions again", "notifications_dropped", episodeDropped)
		}
		st.kept.trim(st.log)
	}
	if first {
		st.log.Warn("HTTP session has no GET stream open: requests to the client waiting for one are dropped, oldest first, until one opens; their callers get no answer", "session", st.id, "max_request_bytes", requestBacklogBytes)
	}
}

// dropOldestRequest takes the oldest request out of the backlog. Its place
// stays (order is kept) until the places left empty are half the backlog:
// each message is then moved at most a few times, however long the
// backlog. st.mu held; a request must be kept.
func (st *httpStream) dropOldestRequest() {
	for !st.backlog[st.oldest].request || st.backlog[st.oldest].dropped {
		st.oldest++
	}
	p := &st.backlog[st.oldest]
	st.requestBytes -= len(p.msg)
	st.backlogBytes -= len(p.msg)
	*p = pending{dropped: true}
	st.oldest++
	st.leaveHole()
}

// leaveHole counts a place left empty in the backlog, compacting it when
// they are half of it. st.mu held.
func (st *httpStream) leaveHole() {
	if st.holes++; st.holes*2 > len(st.backlog) {
		st.backlog = slices.DeleteFunc(st.backlog, func(p pending) bool { return p.dropped })
		st.oldest, st.oldestNote, st.holes = 0, 0, 0
	}
}

func (st *httpStream) Close() error {
	st.closeOnce.Do(func() {
		close(st.closed)
		st.wakePosts()
	})
	st.end()
	return nil
}

// end ends the session: its reader sees EOF and its streams finish.
func (st *httpStream) end() {
	st.endOnce.Do(func() {
		close(st.ended)
		st.held.end()
		st.mu.Lock()
		st.forgetNotes()
		st.mu.Unlock()
		st.wakePosts()
	})
}

// wakePosts wakes the handlers of the open POSTs, which look whether the
// session ended (see respondFrom): called once st.ended or st.closed is
// closed. A POST opened after finds it closed before it waits.
func (st *httpStream) wakePosts() {
	st.mu.Lock()
	defer st.mu.Unlock()
	for _, p := range st.posts {
		p.wakeUp()
	}
	if st.batch != nil {
		st.batch.wakeUp()
	}
}

func (st *httpStream) openPost(id jsonrpc.ID, sse bool) (*postWaiter, error) {
	return st.openPostWritten(id, sse, time.Time{})
}

// openPostWritten is openPost for a POST whose write deadline was set to
// written as it came (zero: not known; see servePost).
func (st *httpStream) openPostWritten(id jsonrpc.ID, sse bool, written time.Time) (*postWaiter, error) {
	p := &postWaiter{st: st, id: id, sse: sse, written: written}
	st.mu.Lock()
	defer st.mu.Unlock()
	if _, dup := st.posts[id]; dup {
		return nil, jsonrpc.ErrIDInUse(id) // its answer would go to that POST
	}
	st.posts[id] = p
	return p, nil
}

func (st *httpStream) closePost(id jsonrpc.ID, p *postWaiter) {
	st.mu.Lock()
	if st.posts[id] == p {
		delete(st.posts, id)
	}
	st.mu.Unlock()
	p.closeGone()
}

// postWaiter is one open POST waiting for its answer.
type postWaiter struct {
	st   *httpStream
	id   jsonrpc.ID // the request's; invalid for a batch
	sse  bool       // the client accepts an event stream
	owed bool       // the session took its request here: its answer comes even after the session ends (answernow.go)
	// written is the write deadline set for the POST's answer as it came
	// (zero: not known): an answer soon after need not set it again.
	written time.Time

	// ch, wake and gone are made when first asked for (chans,
	// waitState), under direct.mu: a request answered on its POST's
	// goroutine (direct.go), as most are, never needs them, and one
	// answered later (an inline call, see answernow.go) needs only wake to
	// wait on: ch and gone are for what comes before the answer (gone for
	// its senders, who wait; the answer's sender reads goneClosed).
	ch chan postMsg // unbuffered (but a batch's): each message waits for the POST's handler to take it
	// final is the answer's slot, filled without waiting (see
	// answernow.go). The POST's handler, waiting, is woken through wake
	// when the slot is filled, when ch is made, and when the session ends
	// or its connection closes (wakePosts): it then looks at each, under
	// direct.mu. One channel, not one for each: a wait on four channels
	// (ch, the answer's, the session's end, the request's context) cost a
	// lock and a waiter of the runtime's for each.
	final       postMsg
	finalFull   bool          // final holds an answer the POST has not taken
	wake        chan struct{} // room for one: a wake-up pending is not sent again
	gone        chan struct{} // closed when nobody takes messages from ch any more (the POST's handler returned, or its client left)
	goneClosed  bool
	answerGiven bool // final took the answer (or direct did): a second one is not taken

	direct directPost // while the request's handler runs on the POST's goroutine (direct.go)
}

// chans returns what a message before the answer is sent on, and what
// says that nobody takes it any more, making them if need be (the POST's
// handler, woken, then waits on ch too).
func (p *postWaiter) chans() (ch chan postMsg, gone chan struct{}) {
	p.direct.mu.Lock()
	defer p.direct.mu.Unlock()
	if p.ch == nil {
		p.ch = make(chan postMsg)
		p.wakeLocked()
	}
	if p.gone == nil {
		p.gone = make(chan struct{})
	}
	return p.ch, p.gone
}

// waitState is what the POST's handler waits on (wake, made the first
// time) and, each time it is woken, looks at: the channel of what comes
// before the answer (nil: nothing came), and whether the answer is in its
// slot.
func (p *postWaiter) waitState() (wake chan struct{}, ch chan postMsg, answered bool) {
	p.direct.mu.Lock()
	defer p.direct.mu.Unlock()
	if p.wake == nil {
		p.wake = make(chan struct{}, 1)
	}
	return p.wake, p.ch, p.finalFull
}

// wakeLocked wakes the POST's handler if it waits (or is about to: a
// wake-up stays pending). direct.mu held.
func (p *postWaiter) wakeLocked() {
	if p.wake == nil {
		return // nobody waits yet: the handler looks before it does
	}
	select {
	case p.wake <- struct{}{}:
	default: // one is pending already
	}
}

func (p *postWaiter) wakeUp() {
	p.direct.mu.Lock()
	defer p.direct.mu.Unlock()
	p.wakeLocked()
}

// sendAnswer is send for the answer: kept for the handler still running on
// the POST's goroutine with no helper (as takeDirect keeps it), else put
// in its slot; both under one lock, taken once for every call.
func (p *postWaiter) sendAnswer(m postMsg) bool {
	d := &p.direct
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.running && d.helper == nil {
		if p.answerGiven {
			return false // a second answer to one request: nobody writes it
		}
		d.answer, d.answered, p.answerGiven = m, true, true
		return true
	}
	return p.giveAnswerLocked(m)
}

func (p *postWaiter) closeGone() {
	p.direct.mu.Lock()
	defer p.direct.mu.Unlock()
	p.closeGoneLocked()
}

func (p *postWaiter) closeGoneLocked() {
	if p.goneClosed {
		return
	}
	p.goneClosed = true
	if p.gone == nil {
		p.gone = closedChan
	} else {
		close(p.gone)
	}
}

// closedChan is the gone of a POST that ended before anyone asked for it.
var closedChan = func() chan struct{} {
	ch := make(chan struct{})
	close(ch)
	return ch
}()

// postMsg is one message for a POST: in one piece (msg), or in parts (a
// big result, not joined). A postMsg with neither says that no answer
// comes.
type postMsg struct {
	msg   []byte
	parts [][]byte
	final bool
}

func (m postMsg) none() bool { return m.msg == nil && m.parts == nil }

// pieces is the message as parts to write one after the other.
func (m postMsg) pieces() [][]byte {
	if m.parts != nil {
		return m.parts
	}
	return [][]byte{m.msg}
}

// joined is the message in one piece, for whoever must keep or read it.
func (m postMsg) joined() []byte {
	if m.parts != nil {
		return bytes.Join(m.parts, nil)
	}
	return m.msg
}

// send passes a message to the POST; false if it will not write it (it
// has left, or has its answer already).
func (p *postWaiter) send(m postMsg) bool {
	if !m.final && !p.sse {
		return false
	}
	if m.final {
		return p.sendAnswer(m)
	}
	if taken, late := p.takeDirect(m); taken || late {
		return taken
	}
	if m.none() {
		// No answer comes: said as an answer is (the helper takeDirect
		// started, if the handler still runs, writes it).
		return p.giveAnswer(m)
	}
	ch, gone := p.chans()
	select {
	case ch <- m:
		return true
	case <-gone:
		return false
	}
}

// giveAnswer puts the answer in the POST's slot, unless the POST has left
// or has an answer already. Under direct.mu, as leave takes the slot's
// answer: one given before the POST left is written by it (see leave),
// and none is reported taken after.
func (p *postWaiter) giveAnswer(m postMsg) bool {
	p.direct.mu.Lock()
	defer p.direct.mu.Unlock()
	return p.giveAnswerLocked(m)
}

func (p *postWaiter) giveAnswerLocked(m postMsg) bool {
	if p.goneClosed || p.answerGiven {
		return false // left, or a second answer to one request: nobody writes it
	}
	p.final, p.finalFull, p.answerGiven = m, true, true // the slot is empty: it takes one answer, once
	p.wakeLocked()
	return true
}

// leave marks the POST as taking nothing more, and returns the answer
// given to it that it has not taken yet, if any: the POST writes it.
func (p *postWaiter) leave() (postMsg, bool) {
	p.direct.mu.Lock()
	defer p.direct.mu.Unlock()
	p.closeGoneLocked()
	if !p.finalFull {
		return postMsg{}, false
	}
	m := p.final
	p.final, p.finalFull = postMsg{}, false
	return m, true
}

// respond writes the POST's answer: plain JSON when the answer comes first,
// else an event stream carrying what comes before it, then the answer. It
// returns the answer, none when none was written.
func (p *postWaiter) respond(w http.ResponseWriter, r *http.Request) postMsg {
	return p.respondFrom(w, r, nil)
}

// respondFrom is respond when first, if not nil, is the first message,
// taken already.
func (p *postWaiter) respondFrom(w http.ResponseWriter, r *http.Request, first *postMsg) (answer postMsg) {
	cw := newClientWriter(w, p.st.writeTimeout)
	cw.written = p.written
	streaming := false
	// write reports whether the POST is done: answered, or cut off.
	write := func(m postMsg) bool {
		if m.none() { // cancelled by the client: no answer comes
			if !streaming {
				cw.status(http.StatusAccepted)
			}
			return true
		}
		if m.final {
			answer = m
		}
		if !streaming && m.final {
			if cw.json(http.StatusOK, m.pieces()...) != nil {
				answer = postMsg{} // not written: the client left (an initialize's session is then dropped)
			}
			return true
		}
		if !streaming {
			streaming = true
			if cw.startEvents() != nil {
				answer = postMsg{}
				return true
			}
		}
		if cw.event(m.pieces()...) != nil {
			answer = postMsg{}
			return true
		}
		return m.final
	}
	// finish is every way out: the POST takes nothing more, and an answer
	// given before (reported taken) is written, or tried; took reports one.
	finish := func() (took bool) {
		m, took := p.leave()
		if took {
			write(m)
		}
		return took
	}
	if first != nil && write(*first) {
		finish()
		return answer
	}
	done := r.Context().Done()
	// ends is what ends the wait without an answer: the session's end,
	// or, for an answer owed past it, its connection's close.
	ends := p.st.ended
	for {
		wake, ch, answered := p.waitState()
		if answered {
			finish() // takes the answer from its slot and writes it
			return answer
		}
		if closedYet(ends) {
			if ends == p.st.ended && p.owed {
				// The session ends its calls in flight with errors that
				// say why (a DELETE, the shutdown grace), written before
				// its connection closes the stream.
				ends = p.st.closed
				continue
			}
			if ends == p.st.ended {
				for { // what was sent before the end still goes out
					select {
					case m := <-ch:
						if write(m) {
							finish()
							return answer
						}
						continue
					default:
					}
					break
				}
			}
			if finish() { // the answer, given before the end
				return answer
			}
			if !streaming {
				p.endedBeforeAnswer(&cw)
			}
			return postMsg{}
		}
		select {
		case m := <-ch: // nil until something came before the answer
			if write(m) {
				finish()
				return answer
			}
		case <-wake:
		case <-done:
			finish()
			return answer // the client went away; it may still get its answer no other way
		}
	}
}

// closedYet reports whether ch is closed, without waiting.
func closedYet(ch chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// endedBeforeAnswer answers a POST whose session ended before its answer
// came, when nothing of its event stream was written yet.
func (p *postWaiter) endedBeforeAnswer(cw *clientWriter) {
	cw.json(http.StatusServiceUnavailable, (&jsonrpc.Message{ID: p.id, Error: jsonrpc.ToWire(errors.New("the session ended before the answer"))}).Encode())
}
