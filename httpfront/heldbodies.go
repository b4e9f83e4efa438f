package httpfront

import (
	"sync"

	"github.com/mcpgate/mcpgate/jsonrpc"
)

// heldBodies keeps a session's requests counted in the front's body budget
// from their POST until they are answered (or cancelled, or the session
// ends), as a modern request's body is (admitStateless): the gateway holds
// a request's bytes for as long as it runs, whether or not its client still
// waits on the POST, so that max_sessions sessions, or one client with many,
// cannot have it hold more than the budget in calls to a slow tool.
type heldBodies struct {
	budget *bodyBudget // the front's; nil holds nothing (a stream outside a front, in tests)

	mu    sync.Mutex
	byID  map[jsonrpc.ID][]int64 // by request id; a client may reuse an id once its POST is gone
	ended bool
}

// hold counts n bytes of the request id; false when they do not fit.
func (h *heldBodies) hold(id jsonrpc.ID, n int64) bool {
	if h.budget == nil {
		return true
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.ended {
		return true // nothing will run: the session is gone
	}
	if ok, _ := h.budget.reserve(n); !ok {
		return false
	}
	if h.byID == nil {
		h.byID = map[jsonrpc.ID][]int64{}
	}
	h.byID[id] = append(h.byID[id], n)
	return true
}

// answered gives back the bytes of the request id, now over. Of requests
// sharing an id, the last is given back first: a duplicate is refused at
// once while the first still runs.
func (h *heldBodies) answered(id jsonrpc.ID) {
	if h.budget == nil {
		return
	}
	h.mu.Lock()
	sizes := h.byID[id]
	var n int64
	switch len(sizes) {
	case 0:
	case 1:
		n = sizes[0]
		delete(h.byID, id)
	default:
		n = sizes[len(sizes)-1]
		h.byID[id] = sizes[:len(sizes)-1]
	}
	h.mu.Unlock()
	if n > 0 {
		h.budget.release(n)
	}
}

// end gives back everything the session held.
func (h *heldBodies) end() {
	if h.budget == nil {
		return
	}
	h.mu.Lock()
	var n int64
	for _, sizes := range h.byID {
		for _, s := range sizes {
			n += s
		}
	}
	h.byID, h.ended = nil, true
	h.mu.Unlock()
	h.budget.release(n)
}
