package main

import (
	"context"
	"encoding/json"
	"os"
	"slices"
	"strings"
	"sync"

	"github.com/mcpgate/mcpgate/jsonrpc"
)

// subscriptions/listen in a modern fake (spec2026.md §8): the fake
// acknowledges what it honours, then delivers on the stream only what was
// asked for, each notification tagged with the listen request's id. A
// modern fake's list_changed and resources/updated (behaviours notify and
// update) go to such streams and nowhere else; a dual fake also sends them
// plainly to its legacy stdio session, if one was opened.

// fakeListen is one open subscription.
type fakeListen struct {
	ctx    context.Context // ends when the client ends the stream: nothing more is sent
	id     jsonrpc.ID
	filter fakeFilter
	end    chan struct{} // closed when the fake ends the subscription (end_listens)

	// sendMu is held across each send, the acknowledgement's first: the
	// subscription is announced before it is acknowledged (a client may
	// act on the acknowledgement at once), and yet nothing goes before it.
	sendMu sync.Mutex
	send   noteSender
}

// deliver sends a notification on the stream, tagged.
func (l *fakeListen) deliver(method string, params json.RawMessage) {
	l.sendMu.Lock()
	defer l.sendMu.Unlock()
	l.send(method, tagged(params, l.id))
}

// fakeFilter is a SubscriptionFilter.
type fakeFilter struct {
	ToolsListChanged      bool     `json:"toolsListChanged,omitempty"`
	PromptsListChanged    bool     `json:"promptsListChanged,omitempty"`
	ResourcesListChanged  bool     `json:"resourcesListChanged,omitempty"`
	ResourceSubscriptions []string `json:"resourceSubscriptions,omitempty"`
}

func (ff fakeFilter) empty() bool {
	return !ff.ToolsListChanged && !ff.PromptsListChanged && !ff.ResourcesListChanged && len(ff.ResourceSubscriptions) == 0
}

// wants reports whether a notification belongs on a stream with this filter.
func (ff fakeFilter) wants(method string, params json.RawMessage) bool {
	switch method {
	case "notifications/tools/list_changed":
		return ff.ToolsListChanged
	case "notifications/prompts/list_changed":
		return ff.PromptsListChanged
	case "notifications/resources/list_changed":
		return ff.ResourcesListChanged
	case "notifications/resources/updated":
		var p struct {
			URI string `json:"uri"`
		}
		json.Unmarshal(params, &p)
		// The updated resource may be a sub-resource of the one subscribed.
		return slices.ContainsFunc(ff.ResourceSubscriptions, func(s string) bool {
			return p.URI == s || strings.HasPrefix(p.URI, strings.TrimSuffix(s, "/")+"/")
		})
	}
	return false
}

// listenable are the notifications a listen stream can carry.
func listenable(method string) bool {
	return method == "notifications/resources/updated" || strings.HasSuffix(method, "/list_changed")
}

// parseFilter reads params.notifications, keys matched exactly.
func parseFilter(raw json.RawMessage) (fakeFilter, bool) {
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil || m == nil {
		return fakeFilter{}, false
	}
	var ff fakeFilter
	json.Unmarshal(m["toolsListChanged"], &ff.ToolsListChanged)
	json.Unmarshal(m["promptsListChanged"], &ff.PromptsListChanged)
	json.Unmarshal(m["resourcesListChanged"], &ff.ResourcesListChanged)
	json.Unmarshal(m["resourceSubscriptions"], &ff.ResourceSubscriptions)
	return ff, true
}

// honour is the part of a filter the fake's capabilities allow, as both
// SDKs decide it: list changes where listChanged is announced, resource
// subscriptions where subscribe is.
func (f *fake) honour(asked fakeFilter) fakeFilter {
	var caps struct {
		Tools     struct{ ListChanged bool } `json:"tools"`
		Prompts   struct{ ListChanged bool } `json:"prompts"`
		Resources struct {
			ListChanged bool `json:"listChanged"`
			Subscribe   bool `json:"subscribe"`
		} `json:"resources"`
	}
	json.Unmarshal(f.capabilities(), &caps)
	got := fakeFilter{
		ToolsListChanged:     asked.ToolsListChanged && caps.Tools.ListChanged,
		PromptsListChanged:   asked.PromptsListChanged && caps.Prompts.ListChanged,
		ResourcesListChanged: asked.ResourcesListChanged && caps.Resources.ListChanged,
	}
	if caps.Resources.Subscribe {
		got.ResourceSubscriptions = asked.ResourceSubscriptions
	}
	return got
}

// tagged adds the subscription id to a notification's params._meta.
func tagged(params json.RawMessage, id jsonrpc.ID) json.RawMessage {
	var p map[string]json.RawMessage
	json.Unmarshal(params, &p)
	if p == nil {
		p = map[string]json.RawMessage{}
	}
	var meta map[string]json.RawMessage
	json.Unmarshal(p["_meta"], &meta)
	if meta == nil {
		meta = map[string]json.RawMessage{}
	}
	meta[metaSubscriptionID] = mustMarshal(id)
	p["_meta"] = mustMarshal(meta)
	return mustMarshal(p)
}

// listen serves subscriptions/listen: the acknowledgement first, then the
// stream stays open until the client ends it (stdio: notifications/
// cancelled, and no answer; HTTP: it closes the stream), the fake does
// (end_listens), or stdin ends; in the last two cases the answer is the
// empty result carrying the subscription id. Honouring nothing ends the
// subscription at once, as both SDKs do.
func (f *fake) listen(ctx context.Context, msg *jsonrpc.Message) (json.RawMessage, error) {
	var p map[string]json.RawMessage
	json.Unmarshal(msg.Params, &p)
	asked, ok := parseFilter(p["notifications"])
	if !ok {
		return nil, jsonrpc.Errorf(jsonrpc.ErrInvalidParams, "subscriptions/listen: params.notifications is missing or not an object (a SubscriptionFilter: toolsListChanged, promptsListChanged, resourcesListChanged, resourceSubscriptions)")
	}
	l := &fakeListen{ctx: ctx, id: msg.ID, filter: f.honour(asked), send: f.sender(ctx), end: make(chan struct{})}
	idMeta := map[string]any{metaSubscriptionID: msg.ID}
	ack := mustMarshal(map[string]any{"_meta": idMeta, "notifications": l.filter})
	result := mustMarshal(map[string]any{"_meta": idMeta})
	if l.filter.empty() {
		l.send("notifications/subscriptions/acknowledged", ack)
		return result, nil
	}
	if f.conn != nil {
		// Other requests' goroutines write to this stream: not with the
		// listen request's context, which ends with it.
		l.send = func(method string, params json.RawMessage) { f.conn.Notify(context.Background(), method, params) }
	}
	l.sendMu.Lock()
	f.mu.Lock()
	f.listens = append(f.listens, l)
	f.mu.Unlock()
	l.send("notifications/subscriptions/acknowledged", ack)
	l.sendMu.Unlock()
	defer f.dropListen(l)
	select {
	case <-l.end:
		return result, nil
	case <-f.closing():
		return result, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// dropListen forgets l; it reports whether l was still open.
func (f *fake) dropListen(l *fakeListen) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	i := slices.Index(f.listens, l)
	if i < 0 {
		return false
	}
	f.listens = slices.Delete(f.listens, i, i+1)
	return true
}

// endListens ends every open subscription from the server's side.
func (f *fake) endListens() {
	f.mu.Lock()
	open := slices.Clone(f.listens)
	f.mu.Unlock()
	for _, l := range open {
		if f.dropListen(l) {
			close(l.end)
		}
	}
}

// closing is closed when stdin has ended (never, over HTTP).
func (f *fake) closing() <-chan struct{} {
	if f.conn == nil {
		return nil
	}
	return f.conn.Done()
}

// announce sends a list_changed or resources/updated notification count
// times, as a fake of a modern era does: to each listen stream that asked
// for it, tagged, and (dual) plainly to an open legacy stdio session.
// Other notifications go on the stream of the request being served.
func (f *fake) announce(ctx context.Context, method string, params json.RawMessage, count int) {
	if !listenable(method) {
		send := f.sender(ctx)
		for range count {
			send(method, params)
		}
		return
	}
	if f.legacyOpen.Load() && f.conn != nil {
		line := (&jsonrpc.Message{Method: method, Params: params}).Encode()
		line = append(line, '\n')
		os.Stdout.Write([]byte(strings.Repeat(string(line), count))) // a burst is one write, as in the legacy fake
	}
	f.mu.Lock()
	open := slices.Clone(f.listens)
	f.mu.Unlock()
	for _, l := range open {
		// The listen's handler forgets it on its own time; a client's
		// cancellation has ended its context already.
		if l.filter.wants(method, params) && l.ctx.Err() == nil {
			for range count {
				l.deliver(method, params)
			}
		}
	}
}
