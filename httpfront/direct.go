package httpfront

import (
	"net/http"
	"sync"

	"github.com/mcpgate/mcpgate/jsonrpc"
)

// A POSTed request is served on the POST's own goroutine, the one net/http
// gives it: its handler runs there and its JSON answer is written there,
// with no handoff to the session's reader, to a handler goroutine, or back
// (see jsonrpc.DirectStream). Most calls get their answer and nothing
// else; for the rest, what comes before the answer (progress, the server's
// requests) must go out while the handler still runs, so the first such
// message starts a helper goroutine that streams the POST's answer as
// respond does, and the handler's answer then goes to it. Either way the
// response has one writer at a time: the helper while it runs, and the
// POST's goroutine only once the helper is done.

// directPost is a postWaiter's state while its request's handler runs on
// the POST's goroutine.
type directPost struct {
	mu       sync.Mutex
	running  bool // the handler runs on the POST's goroutine: nobody takes messages from ch
	w        http.ResponseWriter
	r        *http.Request
	answer   postMsg       // the answer, once given while running with no helper
	answered bool          // answer is set
	helper   chan struct{} // closed when the helper streaming the answer is done; nil while none started
	streamed postMsg       // what the helper's respond returned: valid once helper is closed
}

// serve hands the POST's request to the session and writes its answer, as
// deliver and respond would, running its handler on this goroutine when the
// session lets it. It returns the answer, none when none was written.
func (p *postWaiter) serve(w http.ResponseWriter, r *http.Request, msg *jsonrpc.Message) postMsg {
	d := &p.direct
	d.mu.Lock()
	d.running, d.w, d.r = true, w, r
	d.mu.Unlock()
	job, served := p.st.serveHere(msg)
	// Owed from here, not only once the job is done: a helper the job
	// starts (see takeDirect) streams an owed answer too, past the
	// session's end.
	d.mu.Lock()
	p.owed = served
	d.mu.Unlock()
	if job != nil {
		job()
	}
	d.mu.Lock()
	d.running = false // messages for the POST now go through ch, to whoever responds
	helper, answered, answer := d.helper, d.answered, d.answer
	d.mu.Unlock()
	switch {
	case helper != nil:
		<-helper
		return d.streamed
	case answered:
		return p.respondFrom(w, r, &answer)
	}
	// The answer is still to come: the request was handed on (the session
	// reads its messages itself), or, served here (owed), it is served
	// inline or its answer is queued behind another.
	return p.respond(w, r)
}

// takeDirect takes a message before the answer for the POST while its
// handler runs on the POST's goroutine, which cannot take it from ch: it
// starts the helper, and the message is then sent to it through ch
// (takeDirect reports false). late reports a message that comes after the
// answer kept (sendAnswer keeps it): nobody takes it.
func (p *postWaiter) takeDirect(m postMsg) (taken, late bool) {
	d := &p.direct
	d.mu.Lock()
	defer d.mu.Unlock()
	if !d.running || d.helper != nil {
		return false, false
	}
	if d.answered {
		// The POST's goroutine writes the kept answer alone, as JSON: a
		// helper started now would stream and wait for an answer that
		// never comes to it.
		return false, true
	}
	helper := make(chan struct{})
	d.helper = helper
	go func() {
		defer close(helper)
		d.streamed = p.respond(d.w, d.r)
		// The client may have left: what comes later must not wait for
		// a reader that is gone.
		p.closeGone()
	}()
	return false, false
}
