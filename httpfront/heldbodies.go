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
	byID  map[jsonrpc.ID]heldSizes // by request id; a client may reuse an id once its POST is gone
	ended bool
}

// heldCost is what a request of bodySize bytes counts in the body budget
// while it runs: twice its body. The body stays in memory (its message
// views it) and so does the copy written to the server, whose params
// carry the tool's own name: a budget that counted the body once let the
// held requests take twice the budget (probe 6: 16 calls of 15 MiB held
// 480 MB against 240 counted).
func heldCost(bodySize int) int64 { return 2 * int64(bodySize) }

// heldSizes are the bytes held for the requests of one id: almost always
// one request, kept without a slice of its own (a slice made per request
// was two allocations of every call).
type heldSizes struct {
	last    int64   // the latest request's
	earlier []int64 // the others', oldest first
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
		h.byID = map[jsonrpc.ID]heldSizes{}
	}
	sizes, ok := h.byID[id]
	if ok {
		sizes.earlier = append(sizes.earlier, sizes.last)
	}
	sizes.last = n
	h.byID[id] = sizes
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
	sizes, ok := h.byID[id]
	var n int64
	switch {
	case !ok:
	case len(sizes.earlier) == 0:
		n = sizes.last
		delete(h.byID, id)
	default:
		n = sizes.last
		last := len(sizes.earlier) - 1
		sizes.last, sizes.earlier = sizes.earlier[last], sizes.earlier[:last]
		h.byID[id] = sizes
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
		n += sizes.last
		for _, s := range sizes.earlier {
			n += s
		}
	}
	h.byID, h.ended = nil, true
	h.mu.Unlock()
	h.budget.release(n)
}
