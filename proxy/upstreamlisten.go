package proxy

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"sync"
	"time"

	"github.com/mcpgate/mcpgate/jsonrpc"
)

// A modern server tells of changes only on a subscriptions/listen stream
// the client opened. mcpgate keeps one open to each modern server that can
// change anything: for the lists the server says may change, and for every
// resource a client of mcpgate watches on it. When the set of resources
// changes, a new listen is opened, and the old one cancelled once the new
// one is acknowledged, so that nothing falls between the two. A listen
// the server ends is opened again, with backoff.

// listenAckWait bounds the wait for a server to acknowledge a listen.
const listenAckWait = 10 * time.Second

// upListen is the listen state of one connection to a modern server.
type upListen struct {
	turn chan struct{} // 1-buffered: one change of listen at a time

	mu      sync.Mutex
	current *jsonrpc.Call
	cancel  context.CancelFunc
	acks    map[jsonrpc.ID]chan json.RawMessage // listens awaiting their acknowledgement
	early   map[jsonrpc.ID]json.RawMessage      // acknowledgements that came before their listen was registered
	ended   bool                                // the connection is gone
}

func newUpListen() *upListen {
	return &upListen{turn: make(chan struct{}, 1), acks: map[jsonrpc.ID]chan json.RawMessage{}, early: map[jsonrpc.ID]json.RawMessage{}}
}

// listensTo reports whether the connected server can tell of any change.
func (u *upstream) listensTo() bool {
	for _, k := range []kind{kindTools, kindPrompts, kindResources} {
		var c listCapability
		if raw, ok := u.capability(kinds[k].capability); ok {
			json.Unmarshal(raw, &c)
			if c.ListChanged || (k == kindResources && c.Subscribe) {
				return true
			}
		}
	}
	return false
}

// listenFilterFor is what mcpgate listens for on u: the lists the server
// says may change, and the resources clients watch there.
func (u *upstream) listenFilterFor() listenFilter {
	var f listenFilter
	for _, k := range []kind{kindTools, kindPrompts, kindResources} {
		var c listCapability
		if raw, ok := u.capability(kinds[k].capability); ok {
			json.Unmarshal(raw, &c)
		}
		switch k {
		case kindTools:
			f.ToolsListChanged = c.ListChanged
		case kindPrompts:
			f.PromptsListChanged = c.ListChanged
		case kindResources:
			f.ResourcesListChanged = c.ListChanged
		}
	}
	u.g.mu.Lock()
	f.ResourceSubscriptions = append(f.ResourceSubscriptions, u.g.subscribedURIs(u)...)
	u.g.mu.Unlock()
	slices.Sort(f.ResourceSubscriptions)
	return f
}

// relisten opens a listen on w with the filter as it is now, and cancels
// the one it replaces once the server acknowledged the new one. It
// returns the acknowledged filter.
func (u *upstream) relisten(ctx context.Context, w *wire) (listenFilter, error) {
	ls := w.listen
	select {
	case ls.turn <- struct{}{}:
	case <-ctx.Done():
		return listenFilter{}, ctx.Err()
	}
	defer func() { <-ls.turn }()
	filter := u.listenFilterFor()
	lctx, cancel := context.WithCancel(u.g.ctx)
	call, err := w.conn.Go(lctx, methodListen, u.outgoing(context.Background(), w, methodListen, mustJSON(map[string]any{"notifications": filter})))
	if err != nil {
		cancel()
		return listenFilter{}, err
	}
	ack := make(chan json.RawMessage, 1)
	ls.mu.Lock()
	if early, ok := ls.early[call.ID()]; ok {
		ack <- early
		delete(ls.early, call.ID())
	} else {
		ls.acks[call.ID()] = ack
	}
	gone := ls.ended
	ls.mu.Unlock()
	defer func() {
		// Whatever the outcome: an ack that never came, or came for a
		// listen given up on, must not stay behind.
		ls.mu.Lock()
		delete(ls.acks, call.ID())
		delete(ls.early, call.ID())
		ls.mu.Unlock()
	}()
	if gone {
		u.endListen(w, call, cancel, "the connection is ending")
		return listenFilter{}, jsonrpc.ErrClosed
	}
	ended := make(chan struct{})
	go u.watchListen(w, call, lctx, cancel, ended)

	timer := time.NewTimer(listenAckWait)
	defer timer.Stop()
	var acked struct {
		Notifications listenFilter `json:"notifications"`
	}
	select {
	case params := <-ack:
		json.Unmarshal(params, &acked)
	case <-ended:
		_, err := call.Wait(context.Background())
		if err == nil {
			err = jsonrpc.Errorf(jsonrpc.ErrInternal, "upstream %q ended subscriptions/listen without acknowledging it", u.name)
		}
		return listenFilter{}, err
	case <-timer.C:
		u.endListen(w, call, cancel, "not acknowledged in time")
		return listenFilter{}, jsonrpc.Errorf(errTimeout, "upstream %q did not acknowledge subscriptions/listen within %v", u.name, listenAckWait)
	case <-ctx.Done():
		u.endListen(w, call, cancel, "given up")
		return listenFilter{}, ctx.Err()
	}
	ls.mu.Lock()
	old, oldCancel := ls.current, ls.cancel
	ls.current, ls.cancel = call, cancel
	ls.mu.Unlock()
	if old != nil {
		u.endListen(w, old, oldCancel, "replaced by a new listen")
	}
	return acked.Notifications, nil
}

// endListen cancels a listen of ours: on stdio with notifications/cancelled,
// over HTTP by closing its stream.
func (u *upstream) endListen(w *wire, call *jsonrpc.Call, cancel context.CancelFunc, reason string) {
	u.sendCancel(w, call.ID(), reason)
	cancel()
}

// watchListen waits for a listen to end. One the server ends while it is
// the current one is opened again, after a backoff, while the connection
// lives.
func (u *upstream) watchListen(w *wire, call *jsonrpc.Call, ctx context.Context, cancel context.CancelFunc, ended chan struct{}) {
	defer cancel()
	_, err := call.Wait(ctx)
	close(ended)
	if ctx.Err() != nil || errors.Is(err, jsonrpc.ErrClosed) {
		return // cancelled by us, or the connection is gone
	}
	ls := w.listen
	ls.mu.Lock()
	current := ls.current == call
	if current {
		ls.current, ls.cancel = nil, nil
	}
	ls.mu.Unlock()
	if !current {
		return
	}
	u.log.Info("upstream ended its subscriptions/listen; listening again")
	u.g.goBackground(func() { u.keepListening(w) })
}

// keepListening opens a listen, retrying with backoff until one is
// acknowledged or the connection ends.
func (u *upstream) keepListening(w *wire) {
	for failures := 1; ; failures++ {
		_, err := u.relisten(u.g.ctx, w)
		if err == nil {
			return
		}
		u.log.Warn("subscriptions/listen to upstream failed: its changes are not heard until it succeeds", "err", err)
		timer := time.NewTimer(backoff(min(failures, 5), time.Minute))
		select {
		case <-timer.C:
		case <-w.conn.Done():
			timer.Stop()
			return
		case <-u.g.ctx.Done():
			timer.Stop()
			return
		}
	}
}

// listenAcknowledged hands a server's acknowledgement to the listen it is
// for.
func (u *upstream) listenAcknowledged(params json.RawMessage) {
	w, err := u.connectionNoWait()
	if err != nil || w.listen == nil {
		return
	}
	var p struct {
		Meta struct {
			ID jsonrpc.ID `json:"io.modelcontextprotocol/subscriptionId"`
		} `json:"_meta"`
	}
	if json.Unmarshal(params, &p) != nil || !p.Meta.ID.IsValid() {
		return
	}
	ls := w.listen
	ls.mu.Lock()
	defer ls.mu.Unlock()
	if ch, ok := ls.acks[p.Meta.ID]; ok {
		ch <- params
		delete(ls.acks, p.Meta.ID)
		return
	}
	// An ack may overtake the listen's registration (the request is sent
	// first). Acks for no listen of ours would otherwise fill the room
	// for good: a full table starts again.
	if len(ls.early) >= 16 {
		clear(ls.early)
	}
	ls.early[p.Meta.ID] = params
}

// endListens marks the connection's listens as gone.
func (w *wire) endListens() {
	if w.listen == nil {
		return
	}
	w.listen.mu.Lock()
	w.listen.ended = true
	w.listen.mu.Unlock()
}

// watchModern subscribes to a resource of a modern server: the listen is
// opened again with it, and the server must acknowledge it.
func (u *upstream) watchModern(ctx context.Context, uri string) error {
	w, err := u.connectionCtx(ctx)
	if err != nil {
		return err
	}
	acked, err := u.relisten(ctx, w)
	if err != nil {
		return err
	}
	if !slices.Contains(acked.ResourceSubscriptions, uri) {
		return jsonrpc.Errorf(jsonrpc.ErrInvalidParams, "upstream %q did not accept a subscription to %s", u.name, uri)
	}
	return nil
}

// unwatchModern drops the resources nobody watches any more from the
// listen on a modern server, in the background: nobody waits for it.
func (u *upstream) unwatchModern() {
	w, err := u.connectionNoWait()
	if err != nil {
		return
	}
	u.g.goBackground(func() {
		if _, err := u.relisten(u.g.ctx, w); err != nil && u.g.ctx.Err() == nil {
			u.log.Warn("listening again without the resources no client watches failed", "err", err)
		}
	})
}
