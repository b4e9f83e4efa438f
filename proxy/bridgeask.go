package proxy

import (
	"bytes"
	"context"
	"encoding/json"
	"strconv"
	"sync"
	"time"

	"github.com/mcpgate/mcpgate/internal/rawjson"
	"github.com/mcpgate/mcpgate/jsonrpc"
)

// A legacy server asks the client for input (elicitation, sampling, roots)
// with a request of its own, in the middle of a tool call. A modern client
// cannot be sent a request: it is answered input_required instead, with
// the server's request as an input request, and a requestState that mcpgate
// signs (see exchangestate.go). The server's call goes on meanwhile,
// waiting for its answer. When the client makes its request again with
// the answers and the state, the server's requests are answered, and the
// call goes on: to its result, or to the next request for input. The call
// is an exchange: it lives from the first request to the last answer, and
// is held ("parked") between a client's rounds for at most parkTTL. A state
// that fails the check, names an exchange that has ended, or was already
// used gets -32602, never a guess.

// parkTTL bounds how long an exchange waits for the client to come back.
const parkTTL = 10 * time.Minute

// maxParked bounds the exchanges waiting for their clients, over all
// clients: a server's request past it is refused. One client may hold at
// most its share (clientShareOf).
const maxParked = 1024

// maxPendingAsks bounds the server's requests one exchange holds.
const maxPendingAsks = 16

// exchange is one call of a modern client to a legacy server that asked,
// or may ask, for input.
type exchange struct {
	g      *Gateway
	id     string
	up     *upstream // the configured server
	method string    // the client's method
	name   string    // and the name or URI it used
	client string    // who made it (session.client): only they may continue it
	holder string    // the client it counts against (session.holder)
	cancel context.CancelFunc
	// progress is the call's minted progress token, pointed at the
	// client's request of the round under way (none while parked).
	progress progressLease

	result chan callResult // the server's answer to the call
	asks   chan *ask       // the server's requests, as they come
	done   chan struct{}   // closed when the exchange ends

	mu      sync.Mutex
	round   int             // bumped each time the client is answered: a state is good for one round
	pending map[string]*ask // the server's requests the client was asked to answer, by key
	keys    int             // keys made so far
	expiry  *time.Timer     // while parked
	ended   bool
}

type callResult struct {
	res json.RawMessage
	err error
}

// ask is one request of the server, waiting for the client's answer.
type ask struct {
	key    string
	method string
	params json.RawMessage
	answer chan callResult // 1-buffered
}

// callBridged makes a modern client's call to a legacy server as an
// exchange, so that a request for input can be answered input_required.
func (s *session) callBridged(ctx context.Context, up *upstream, method, name string, params json.RawMessage, dl *deadline, progress progressLease) (json.RawMessage, error) {
	x := &exchange{
		g: s.g, id: newSessionID(), up: up.base, method: method, name: name, client: s.client, holder: s.holder(), progress: progress,
		result: make(chan callResult, 1), asks: make(chan *ask, maxPendingAsks), done: make(chan struct{}),
		pending: map[string]*ask{},
	}
	req, _ := requestFrom(ctx)
	req.x = x
	// The call outlives the client's request: it is the exchange's, and
	// ends with it.
	xctx, cancel := context.WithCancel(context.WithValue(context.WithoutCancel(ctx), ctxRequestKey{}, &req))
	x.cancel = cancel
	// The gateway owns the call (Close ends the exchanges, then waits).
	if !s.g.addBackground() {
		cancel()
		progress.release()
		return nil, jsonrpc.Errorf(errUnavailable, "mcpgate is stopping: %s is not sent", method)
	}
	go func() {
		defer s.g.background.Done()
		res, err := up.callWatched(xctx, method, params, dl)
		progress.release()
		x.result <- callResult{legacyComplete(res), err}
	}()
	return s.awaitExchange(ctx, x)
}

// awaitExchange waits for the server's answer, or for its next request for
// input, which the client is then asked for.
func (s *session) awaitExchange(ctx context.Context, x *exchange) (json.RawMessage, error) {
	select {
	case r := <-x.result:
		x.end("the call ended")
		return r.res, r.err
	case a := <-x.asks:
		x.mu.Lock()
		x.pending[a.key] = a
		for more := true; more; { // the server's requests that came together go together
			select {
			case b := <-x.asks:
				x.pending[b.key] = b
			default:
				more = false
			}
		}
		x.mu.Unlock()
		if ctx.Err() != nil {
			// The request ended as the server asked: its client never gets
			// the state to come back with, so nothing is parked for it.
			x.end("cancelled by the client")
			return nil, ctx.Err()
		}
		return x.park(ctx)
	case <-ctx.Done():
		select {
		case r := <-x.result: // the server's answer came with the end: it is the outcome
			x.end("the call ended")
			return r.res, r.err
		default:
		}
		x.end("cancelled by the client")
		return nil, ctx.Err()
	}
}

// park answers the client input_required with the server's pending
// requests, and holds the exchange until the client comes back. A request
// ctx that ended by the time the exchange is held ends it at once: its
// client never gets the state to come back with. (Looked for once the
// exchange is parked, so that a cancel coming at any point before is
// seen; one after, as the answer goes, leaves it to wait out parkTTL.)
func (x *exchange) park(ctx context.Context) (json.RawMessage, error) {
	g := x.g
	g.mu.Lock()
	if err := g.roomToPark(x); err != nil {
		g.mu.Unlock()
		x.end("too many exchanges wait for their clients")
		return nil, err
	}
	x.mu.Lock()
	ended := x.ended // ended meanwhile: end has nothing parked to take away
	x.mu.Unlock()
	if ended {
		g.mu.Unlock()
		return nil, jsonrpc.Errorf(errUnavailable, "upstream %q: the call ended while it asked for input", x.up.name)
	}
	g.parkExchange(x)
	g.mu.Unlock()
	x.progress.retarget(nil, jsonrpc.ID{}, nil) // the client is away until its next round
	x.mu.Lock()
	x.round++
	requests := make(map[string]inputRequest, len(x.pending))
	for k, a := range x.pending {
		requests[k] = inputRequest{Method: a.method, Params: a.params}
	}
	state := g.signState(exchangeState{Exchange: x.id, Round: x.round, Server: x.up.name, Method: x.method, Name: x.name, Expires: time.Now().Add(parkTTL).Unix(), Client: g.clientTag(x.client)})
	x.expiry = time.AfterFunc(parkTTL, func() { x.end("the client did not come back with the input within " + parkTTL.String()) })
	x.mu.Unlock()
	if err := ctx.Err(); err != nil {
		x.end("cancelled by the client")
		return nil, err
	}
	return mustJSON(map[string]any{"resultType": "input_required", "inputRequests": requests, "requestState": state}), nil
}

// roomToPark refuses to hold x past the cap for all clients, or past the
// share of its client. g.mu held.
func (g *Gateway) roomToPark(x *exchange) error {
	if len(g.parked) >= maxParked {
		return jsonrpc.Errorf(jsonrpc.ErrInternal, "upstream %q asked for input, and mcpgate already holds %d calls waiting for their clients' input, the most it keeps for all clients; retry later", x.up.name, maxParked)
	}
	if held := g.parkedOf[x.holder]; held >= clientShareOf(maxParked) {
		return jsonrpc.Errorf(jsonrpc.ErrInternal, "upstream %q asked for input, and this client already has %d calls waiting for its input, the most mcpgate keeps for one client (of %d for all); answer or cancel those first", x.up.name, held, maxParked)
	}
	return nil
}

// resumeExchange serves a modern client's request that carries a state of
// mcpgate's: the exchange it names gets the answers, and goes on.
func (s *session) resumeExchange(ctx context.Context, up *upstream, method, name string, params json.RawMessage, state string) (json.RawMessage, error) {
	st, err := s.g.checkState(state, s.client)
	if err != nil {
		return nil, err
	}
	if st.Server != up.base.name || st.Method != method || st.Name != name {
		return nil, invalidState("it was issued for another request")
	}
	g := s.g
	g.mu.Lock()
	x := g.parked[st.Exchange]
	if x != nil {
		x.mu.Lock()
		current := x.round == st.Round && !x.ended
		x.mu.Unlock()
		if current {
			g.unparkExchange(x) // one retry at a time: a second one with the same state is refused
		} else {
			x = nil
		}
	}
	g.mu.Unlock()
	if x == nil {
		return nil, invalidState("the call it continues has ended, or the state was used already")
	}
	// The call's progress goes to this round before the server has its
	// answers: what it sends as soon as it has them is this round's (it
	// went nowhere while the lease still pointed at the parked call).
	req, _ := requestFrom(ctx)
	_, _, _, token, _ := progressTokenOf(params)
	x.progress.retarget(s, req.id, token)
	x.mu.Lock()
	if x.ended || !x.expiry.Stop() {
		// Its time ran out as it was taken: end has it, or will.
		x.mu.Unlock()
		return nil, invalidState("the call it continues has ended (it waited longer than " + parkTTL.String() + ")")
	}
	var answers map[string]json.RawMessage
	if ms, err := rawjson.SplitValid(params); err == nil {
		if raw, ok := ms.Get("inputResponses"); ok {
			json.Unmarshal(raw, &answers)
		}
	}
	for k, a := range x.pending {
		if ans, ok := answers[k]; ok && isObject(ans) {
			a.answer <- callResult{res: ans}
			delete(x.pending, k)
		}
	}
	left := len(x.pending)
	x.mu.Unlock()
	if left > 0 {
		return x.park(ctx) // asked again for what is still missing
	}
	return s.awaitExchange(ctx, x)
}

// end ends the exchange: its call is cancelled if it still runs, and the
// server's requests still waiting are answered with an error.
func (x *exchange) end(why string) {
	x.mu.Lock()
	if x.ended {
		x.mu.Unlock()
		return
	}
	x.ended = true
	if x.expiry != nil {
		x.expiry.Stop()
	}
	pending := x.pending
	x.pending = nil
	x.mu.Unlock()
	x.g.mu.Lock()
	x.g.unparkExchange(x)
	x.g.mu.Unlock()
	x.cancel()
	close(x.done)
	for _, a := range pending {
		a.answer <- callResult{err: jsonrpc.Errorf(jsonrpc.ErrInternal, "the client did not answer %s: %s", a.method, why)}
	}
}

// ask hands a server's request to the exchange and waits for the client's
// answer to it.
func (x *exchange) ask(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
	x.mu.Lock()
	if x.ended {
		x.mu.Unlock()
		return nil, jsonrpc.Errorf(jsonrpc.ErrInternal, "mcpgate cannot pass %s to the client: the call it came with has ended", method)
	}
	x.keys++
	a := &ask{key: "mcpgate-" + strconv.Itoa(x.keys), method: method, params: params, answer: make(chan callResult, 1)}
	x.mu.Unlock()
	select {
	case x.asks <- a:
	default:
		return nil, jsonrpc.Errorf(jsonrpc.ErrInternal, "mcpgate cannot pass %s to the client: %d requests of the server already wait for it", method, maxPendingAsks)
	}
	select {
	case r := <-a.answer:
		return r.res, r.err
	case <-x.done:
		select {
		case r := <-a.answer:
			return r.res, r.err
		default:
		}
		return nil, jsonrpc.Errorf(jsonrpc.ErrInternal, "mcpgate cannot pass %s to the client: the call it came with has ended", method)
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// stateOf returns the requestState a modern client's request carries, if
// it is one of mcpgate's.
func stateOf(params json.RawMessage) (string, bool) {
	if !bytes.Contains(params, []byte(`"requestState"`)) && !bytes.Contains(params, []byte(`\u`)) {
		return "", false // no such key, not even written with an escape
	}
	ms, err := rawjson.SplitValid(params)
	if err != nil {
		return "", false
	}
	raw, ok := ms.Get("requestState")
	var state string
	if !ok || json.Unmarshal(raw, &state) != nil {
		return "", false
	}
	return state, true
}

func isObject(v json.RawMessage) bool {
	v = bytes.TrimSpace(v)
	return len(v) > 0 && v[0] == '{'
}

// invalidState is the error for a requestState mcpgate cannot continue.
func invalidState(why string) error {
	e := jsonrpc.Errorf(jsonrpc.ErrInvalidParams, "Invalid or expired requestState: %s; make the request again without it", why)
	e.Data = json.RawMessage(`{"reason":"invalid_request_state"}`)
	return e
}

// endExchanges ends every exchange still waiting for its client: mcpgate
// is stopping, and nobody will come back for them.
func (g *Gateway) endExchanges() {
	g.mu.Lock()
	parked := make([]*exchange, 0, len(g.parked))
	for _, x := range g.parked {
		parked = append(parked, x)
	}
	g.mu.Unlock()
	for _, x := range parked {
		x.end("mcpgate is stopping")
	}
}
