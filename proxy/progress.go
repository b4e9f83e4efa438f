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

// register mints a token for the entry's request. Releasing the lease
// forgets it: progress after the answer is dropped, as clients drop it anyway.
func (t *progressTable) register(e *progressEntry) (minted json.RawMessage, lease progressLease) {
	t.mu.Lock()
	t.next++
	minted = quote("mcpgate-" + strconv.FormatInt(t.next, 10))
	key := string(minted)
	t.byToken[key] = e
	t.mu.Unlock()
	return minted, progressLease{t, key}
}

// progressLease is a minted token's place in the table, held by whoever
// waits for the server's answer. The zero lease holds none.
type progressLease struct {
	t   *progressTable
	key string
}

func (l progressLease) release() {
	if l.t == nil {
		return
	}
	l.t.mu.Lock()
	delete(l.t.byToken, l.key)
	l.t.mu.Unlock()
}

// retarget sends the token's progress to another request of a client: the
// round of a bridged call (bridgeask.go) the client makes now. With no
// token (the client asked for none, or is away between rounds), progress
// still pushes the deadline back but goes to nobody.
func (l progressLease) retarget(s *session, request jsonrpc.ID, token json.RawMessage) {
	if l.t == nil {
		return
	}
	l.t.mu.Lock()
	defer l.t.mu.Unlock()
	if e := l.t.byToken[l.key]; e != nil {
		e.s, e.request, e.token = s, request, token
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
// minted one, whose progress pushes dl back. The lease must be released
// when the request is answered.
func (g *Gateway) mapProgressToken(s *session, request jsonrpc.ID, up *upstream, params json.RawMessage, dl *deadline) (json.RawMessage, progressLease) {
	ms, meta, mm, token, ok := progressTokenOf(params)
	if !ok {
		return params, progressLease{}
	}
	minted, lease := g.progress.register(&progressEntry{s: s, request: request, up: up, token: token, deadline: dl})
	return ms.Replace(params, "_meta", mm.Replace(meta, "progressToken", minted)), lease
}

// progressTokenOf finds params._meta.progressToken, and returns it with
// the splits that lead to it.
func progressTokenOf(params json.RawMessage) (ms rawjson.MemberList, meta json.RawMessage, mm rawjson.MemberList, token json.RawMessage, ok bool) {
	// A key may be written with escapes ("progre\u0073sToken"): the server
	// reads it as the token all the same, so such params are split too.
	if !bytes.Contains(params, []byte(`"progressToken"`)) && !bytes.Contains(params, []byte(`\u`)) {
		return
	}
	ms, err := rawjson.Members(params)
	if err != nil {
		return
	}
	meta, ok = ms.Get("_meta")
	if !ok || len(meta) == 0 || meta[0] != '{' {
		return ms, nil, nil, nil, false
	}
	if mm, err = rawjson.SplitValid(meta); err != nil {
		return ms, nil, nil, nil, false
	}
	token, ok = mm.Get("progressToken")
	return
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
	if e.token == nil {
		return
	}
	e.s.notifyRelated(notifyProgress, ms.Replace(params, "progressToken", e.token), e.request)
}
