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
	s        *session
	request  jsonrpc.ID // the client request the progress is about
	up       *upstream
	token    json.RawMessage // the client's own token, byte-exact
	deadline *deadline       // the request's: progress pushes it back
}

func newProgressTable() *progressTable {
	return &progressTable{byToken: map[string]*progressEntry{}}
}

// register mints a token for the entry's request. release forgets it:
// progress after the answer is dropped, as clients drop it anyway.
func (t *progressTable) register(e *progressEntry) (minted json.RawMessage, release func()) {
	t.mu.Lock()
	t.next++
	minted = quote("mcpgate-" + strconv.FormatInt(t.next, 10))
	key := string(minted)
	t.byToken[key] = e
	t.mu.Unlock()
	return minted, func() {
		t.mu.Lock()
		delete(t.byToken, key)
		t.mu.Unlock()
	}
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
// minted one, whose progress pushes dl back. release must be called when
// the request is answered.
func (g *Gateway) mapProgressToken(s *session, request jsonrpc.ID, up *upstream, params json.RawMessage, dl *deadline) (json.RawMessage, func()) {
	noop := func() {}
	if !bytes.Contains(params, []byte(`"progressToken"`)) {
		return params, noop
	}
	ms, err := rawjson.Members(params)
	if err != nil {
		return params, noop
	}
	meta, ok := ms.Get("_meta")
	if !ok || len(meta) == 0 || meta[0] != '{' {
		return params, noop
	}
	mm, err := rawjson.SplitValid(meta)
	if err != nil {
		return params, noop
	}
	token, ok := mm.Get("progressToken")
	if !ok {
		return params, noop
	}
	minted, release := g.progress.register(&progressEntry{s: s, request: request, up: up, token: token, deadline: dl})
	return ms.Replace(params, "_meta", mm.Replace(meta, "progressToken", minted)), release
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
	e.deadline.extend()
	e.s.notifyRelated(notifyProgress, ms.Replace(params, "progressToken", e.token), e.request)
}
