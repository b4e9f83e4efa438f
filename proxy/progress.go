package proxy

import (
	"bytes"
	"encoding/json"
	"strconv"
	"sync"

	"github.com/mcpgate/mcpgate/internal/rawjson"

	"github.com/mcpgate/mcpgate/jsonrpc"
)

// progressTable maps the progress tokens the gateway mints toward upstreams
// back to the session and token of the client that asked. Clients choose
// their tokens freely, so two clients' tokens may be equal; minted ones
// never are.
type progressTable struct {
	mu      sync.Mutex
	next    int64
	byToken map[string]*progressEntry // minted token (JSON text) → who asked
}

type progressEntry struct {
	s       *session
	request jsonrpc.ID // the client request the progress is about
	up      *upstream
	token   json.RawMessage // the client's own token, byte-exact
	extend  func()          // pushes the request's deadline back; nil until set
}

func newProgressTable() *progressTable {
	return &progressTable{byToken: map[string]*progressEntry{}}
}

// register mints a token for a request from s to up. release forgets it:
// progress after the answer is dropped, as clients drop it anyway. watch
// hands the entry the function that extends the request's deadline.
func (t *progressTable) register(s *session, request jsonrpc.ID, up *upstream, token json.RawMessage) (minted json.RawMessage, release func(), watch func(func())) {
	t.mu.Lock()
	t.next++
	minted = quote("mcpgate-" + strconv.FormatInt(t.next, 10))
	key := string(minted)
	t.byToken[key] = &progressEntry{s: s, request: request, up: up, token: token}
	t.mu.Unlock()
	release = func() {
		t.mu.Lock()
		delete(t.byToken, key)
		t.mu.Unlock()
	}
	watch = func(extend func()) {
		t.mu.Lock()
		if e := t.byToken[key]; e != nil {
			e.extend = extend
		}
		t.mu.Unlock()
	}
	return minted, release, watch
}

func (t *progressTable) lookup(up *upstream, token json.RawMessage) (progressEntry, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	e, ok := t.byToken[string(token)]
	if !ok || e.up != up {
		return progressEntry{}, false
	}
	return *e, true
}

func (t *progressTable) dropSession(s *session) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for k, e := range t.byToken {
		if e.s == s {
			delete(t.byToken, k)
		}
	}
}

// mapProgressToken replaces a client's _meta.progressToken in params with a
// minted one. release must be called when the request is answered; watch
// (nil without a token) takes the request's deadline extender.
func (g *Gateway) mapProgressToken(s *session, request jsonrpc.ID, up *upstream, params json.RawMessage) (json.RawMessage, func(), func(func())) {
	noop := func() {}
	if !bytes.Contains(params, []byte(`"progressToken"`)) {
		return params, noop, nil
	}
	ms, err := rawjson.Members(params)
	if err != nil {
		return params, noop, nil
	}
	meta, ok := ms.Get("_meta")
	if !ok || len(meta) == 0 || meta[0] != '{' {
		return params, noop, nil
	}
	mm, err := rawjson.SplitValid(meta)
	if err != nil {
		return params, noop, nil
	}
	token, ok := mm.Get("progressToken")
	if !ok {
		return params, noop, nil
	}
	minted, release, watch := g.progress.register(s, request, up, token)
	return ms.Replace(params, "_meta", mm.Replace(meta, "progressToken", minted)), release, watch
}

// relayProgress sends an upstream's progress to the client that asked for
// it, with that client's own token. Progress for a token that is unknown,
// finished, or another upstream's is dropped.
func (g *Gateway) relayProgress(u *upstream, params json.RawMessage) {
	ms, err := rawjson.Members(params)
	if err != nil {
		return
	}
	token, ok := ms.Get("progressToken")
	if !ok {
		return
	}
	e, ok := g.progress.lookup(u, token)
	if !ok {
		return
	}
	if e.extend != nil {
		e.extend()
	}
	e.s.notifyRelated(notifyProgress, ms.Replace(params, "progressToken", e.token), e.request)
}
